from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        max_length=100, label=_("Name"), help_text=_("what the token is for, e.g. 'CI runs'")
    )
