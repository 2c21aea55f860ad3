"""Forms of the organizer pages; validation lives in ``clean*`` (STYLE.md habit 5)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.forms import formset_factory
from django.utils.translation import gettext_lazy as _

from config.ids import request_id, request_ids
from config.uploads import check_upload_size
from evaluation.metrics.gains import MAX_GAIN, check_gain

from .edits import PageSynset
from .imports import KINDS
from .models import Collection, LevelRow, Role


class CollectionForm(forms.ModelForm):
    # the database refuses L' = 0 (a check constraint); the form says so beside the field
    max_output_size = forms.IntegerField(
        label=_("Max output size L'"),
        min_value=1,
        max_value=32767,
        initial=5,
        help_text=Collection._meta.get_field("max_output_size").help_text,
    )

    class Meta:
        model = Collection
        fields = [
            "name",
            "slug",
            "description",
            "guidelines",
            "matching_mode",
            "max_output_size",
            "open_for_submissions",
            "leaderboard_published",
        ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            # changing it re-keys the runs' answers too: the evaluation app's Matching mode
            # page does it (``collection_matching_mode_change``), not this form
            field = self.fields["matching_mode"]
            field.disabled = True
            field.help_text = _("change it on the collection's Matching mode page")


class LevelForm(forms.Form):
    code = forms.CharField(label=_("Code"), max_length=8)
    label = forms.CharField(label=_("Label"), max_length=100, required=False)
    gain = forms.FloatField(label=_("Gain"), min_value=0, max_value=MAX_GAIN)
    examples = forms.CharField(
        label=_("Examples"),
        max_length=2000,
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 30}),
        help_text=_("example answers of this level, one per line"),
    )

    def clean_gain(self):
        try:
            return check_gain(self.cleaned_data["gain"])
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e


class BaseLevelFormSet(forms.BaseFormSet):
    def clean(self):
        if any(self.errors):
            return
        codes = [
            f.cleaned_data["code"].strip()
            for f in self.forms
            if f.cleaned_data and not self._should_delete_form(f)
        ]
        if not codes:
            raise forms.ValidationError(_("A collection needs at least one level."))
        if len(set(codes)) != len(codes):
            raise forms.ValidationError(_("Level codes must differ."))

    def rows(self) -> list[LevelRow]:
        """The levels kept, in order (after ``is_valid``)."""
        return [
            LevelRow(
                f.cleaned_data["code"].strip(),
                f.cleaned_data.get("label", ""),
                f.cleaned_data["gain"],
                f.cleaned_data.get("examples", ""),
            )
            for f in self.forms
            if f.cleaned_data and not self._should_delete_form(f)
        ]


LevelFormSet = formset_factory(LevelForm, formset=BaseLevelFormSet, extra=1, can_delete=True)


# least privileged first: a new member is a participant unless the organizer says otherwise
MEMBER_ROLE_CHOICES = [
    (r.value, r.label) for r in (Role.PARTICIPANT, Role.ASSESSOR, Role.ORGANIZER)
]


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=MEMBER_ROLE_CHOICES, initial=Role.PARTICIPANT)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        try:
            self.user = get_user_model().objects.get(username=name)
        except get_user_model().DoesNotExist:
            raise forms.ValidationError(_("No user %(name)s.") % {"name": repr(name)}) from None
        return name


class MemberInviteForm(forms.Form):
    """A new account for someone who has none yet; they set its password on a one-time
    link."""

    username = forms.CharField(
        label=_("Username"), max_length=150, help_text=_("letters, digits and @.+-_ only")
    )
    email = forms.EmailField(
        label=_("Email"), required=False, help_text=_("optional, for your records")
    )
    role = forms.ChoiceField(label=_("Role"), choices=MEMBER_ROLE_CHOICES, initial=Role.PARTICIPANT)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        UnicodeUsernameValidator()(name)
        if get_user_model().objects.filter(username__iexact=name).exists():
            raise forms.ValidationError(
                _(
                    "The username %(name)s is taken: add that user above instead, "
                    "or choose another name."
                )
                % {"name": repr(name)}
            )
        return name


class MemberChangeForm(forms.Form):
    """A member's new role (the members table's ``action=role``) or their removal
    (``action=remove``, no role).  The role is checked by ``organizing.membership_set``,
    whose refusal names it."""

    user = forms.CharField()
    role = forms.CharField(required=False)

    def clean_user(self):
        pk = request_id(self.cleaned_data["user"])
        user = get_user_model().objects.filter(pk=pk).first() if pk is not None else None
        if user is None:
            raise forms.ValidationError(_("No such user."))
        return user


class ImportForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind"), choices=list(KINDS.items()))
    file = forms.FileField(label=_("File"))

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.IMPORT_MAX_MB, "imports")


# -- the judging operations: one small form each (the table is annotate.operations.OPERATIONS) -----
class JudgeForm(forms.Form):
    """What every judging operation sends: the question's version its page showed (none
    from an old page: then nothing is checked against it)."""

    version = forms.IntegerField(required=False)

    def refusal(self) -> str:
        """The errors as one sentence, for the workspace's notice."""
        return " ".join(str(e) for errors in self.errors.values() for e in errors)


class WithLevel(forms.Form):
    level = forms.CharField(required=False)  # a level code; none: the service decides

    def clean_level(self) -> str | None:
        return self.cleaned_data["level"] or None


class WithText(forms.Form):
    text = forms.CharField(error_messages={"required": _("Type an answer string first.")})


class IdsField(forms.Field):
    """Several ids posted under one name."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[int]:
        try:
            return [int(v) for v in value or ()]
        except (TypeError, ValueError):
            raise forms.ValidationError(_("Those are not ids of this page.")) from None


class StringForm(JudgeForm):
    """An operation on one answer string, with its token as the page showed it."""

    string = forms.IntegerField(
        error_messages={
            "required": _("No answer string chosen."),
            "invalid": _("No answer string chosen."),
        }
    )
    expect = forms.CharField(required=False)

    def clean_expect(self) -> str | None:
        return self.cleaned_data["expect"] or None


class WithSynset(forms.Form):
    """A target synset: ``synset`` (its id), or ``ordinal``, its number on the page, read
    with ``page_synsets`` (the ids in the order the page showed them; absent from a plain
    form post) so that the service refuses a number whose meaning changed meanwhile."""

    synset = forms.IntegerField(required=False)
    ordinal = forms.CharField(required=False)
    page_synsets = forms.CharField(required=False)

    def clean(self):
        data = super().clean()
        if data.get("synset") is None and data.get("ordinal"):
            data["synset"] = self._page_synset(data["ordinal"], data.get("page_synsets", ""))
        return data

    def _page_synset(self, ordinal: str, page_synsets: str) -> PageSynset | None:
        n = request_id(ordinal) or 0
        if n < 1:
            self.add_error("ordinal", _("There is no synset %(n)s.") % {"n": ordinal})
            return None
        if "page_synsets" not in self.data:
            return PageSynset(ordinal=n)
        shown = page_synsets.split()
        if n > len(shown) or request_id(shown[n - 1]) is None:
            self.add_error(
                "ordinal",
                _("There is no synset %(n)s on your page; nothing was changed.") % {"n": n},
            )
            return None
        return PageSynset(ordinal=n, pk=int(shown[n - 1]))


class StringLevelForm(StringForm, WithLevel):
    pass


class StringJudgeForm(StringForm, WithSynset, WithLevel):
    pass


class StringEditForm(StringForm):
    text = forms.CharField(required=False, strip=False)  # the service refuses an empty key


class StringTypeForm(JudgeForm, WithText, WithSynset, WithLevel):
    target = forms.CharField(required=False)  # "new": into a new synset


class SynsetMergeForm(JudgeForm, WithSynset):
    """Merge the synsets ``merge`` (ids) into ``synset`` / ``ordinal``."""

    merge = IdsField(required=False)


class SynsetSplitForm(JudgeForm):
    strings = IdsField(error_messages={"required": _("Tick the strings to split out first.")})


class LevelOnlyForm(JudgeForm, WithLevel):
    pass


class NotesForm(JudgeForm):
    notes = forms.CharField(required=False, strip=False)


# -- the adjudication page's operations (the table is annotate.operations.ADJUDICATION_OPERATIONS)
class AdjudicateForm(forms.Form):
    """An operation of the adjudication page with nothing to name (undo, agree); gold's
    version the page showed is read by the view, which locks the question with it first."""


class AdjudicateStringForm(AdjudicateForm):
    string = forms.IntegerField()


class AdjudicateTakeForm(AdjudicateStringForm):
    """Take one layer's judgment of ``string``."""

    layer = forms.IntegerField()


class AdjudicateTakeSynsetForm(AdjudicateForm):
    """Take one layer's synset ``group`` whole."""

    layer = forms.IntegerField()
    group = forms.IntegerField()


class AdjudicateLevelForm(AdjudicateStringForm):
    level = forms.CharField()  # a level code, checked by the service


class AdjudicateMergeForm(AdjudicateForm):
    synsets = forms.Field(required=False, widget=forms.MultipleHiddenInput)

    def clean_synsets(self) -> list[int]:
        # what is not an id is left out; the service refuses fewer than two synsets
        return request_ids(self.cleaned_data["synsets"] or ())


class AdjudicatePlaceForm(AdjudicateStringForm):
    """A string no layer judged (pooled after they were done) into the gold synset
    ``synset`` (its id) or ``new``, at ``level`` (none: the service decides)."""

    synset = forms.CharField()
    level = forms.CharField(required=False)

    def clean_synset(self) -> int | None:
        synset = self.cleaned_data["synset"]
        if synset == "new":
            return None
        try:
            return int(synset)
        except ValueError:
            raise forms.ValidationError(_("Choose a synset or a new one.")) from None

    def clean_level(self) -> str | None:
        return self.cleaned_data["level"] or None
