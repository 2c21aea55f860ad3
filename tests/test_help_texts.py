"""Django renders a form field's help text as HTML: one holding "<TAB>" lost it as a tag on
the upload page.  No help text of ours may hold markup characters."""

from __future__ import annotations

import inspect

import pytest
from django import forms

import annotate.forms
import evaluation.forms


def _forms():
    for module in (annotate.forms, evaluation.forms):
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, forms.BaseForm) and obj.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj


@pytest.mark.parametrize("name, form", list(_forms()))
def test_help_texts_hold_no_markup(name, form):
    fields = getattr(form, "base_fields", {})
    for field_name, field in fields.items():
        text = str(field.help_text or "")
        assert not set(text) & set("<>&"), f"{name}.{field_name}: {text!r}"


def test_the_upload_page_shows_the_tab_separated_format(db, client):
    from tests.factories import add_member, make_collection, make_user

    c = make_collection(slug="ht")
    u = make_user(username="ht-p")
    add_member(collection=c, user=u, role="organizer")
    client.force_login(u)
    page = client.get("/collections/ht/runs/upload/").content.decode()
    assert "tab-separated: question_id, rank, answer" in page
