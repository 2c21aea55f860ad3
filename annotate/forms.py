"""Forms of the organizer pages; validation lives in ``clean*`` (STYLE.md habit 5)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.forms import formset_factory

from config.uploads import check_upload_size
from evaluation.metrics.gains import MAX_GAIN, check_gain

from .imports import KINDS
from .models import Collection, Role


class CollectionForm(forms.ModelForm):
    # the database refuses L' = 0 (a check constraint); the form says so beside the field
    max_output_size = forms.IntegerField(
        label="Max output size L'", min_value=1, max_value=32767, initial=5,
        help_text=Collection._meta.get_field("max_output_size").help_text)

    class Meta:
        model = Collection
        fields = ["name", "slug", "description", "guidelines", "matching_mode",
                  "max_output_size", "open_for_submissions", "leaderboard_published"]


class LevelForm(forms.Form):
    code = forms.CharField(max_length=8)
    label = forms.CharField(max_length=100, required=False)
    gain = forms.FloatField(min_value=0, max_value=MAX_GAIN)

    def clean_gain(self):
        try:
            return check_gain(self.cleaned_data["gain"])
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e


class BaseLevelFormSet(forms.BaseFormSet):
    def clean(self):
        if any(self.errors):
            return
        codes = [f.cleaned_data["code"].strip() for f in self.forms
                 if f.cleaned_data and not self._should_delete_form(f)]
        if not codes:
            raise forms.ValidationError("A collection needs at least one level.")
        if len(set(codes)) != len(codes):
            raise forms.ValidationError("Level codes must differ.")


LevelFormSet = formset_factory(LevelForm, formset=BaseLevelFormSet, extra=1, can_delete=True)


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        try:
            self.user = get_user_model().objects.get(username=name)
        except get_user_model().DoesNotExist:
            raise forms.ValidationError(f"No user {name!r}.") from None
        return name


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=list(KINDS.items()))
    file = forms.FileField()

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.IMPORT_MAX_MB, "imports")
