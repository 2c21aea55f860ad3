"""The admin shows every model of both apps: list (with search and each filter) and add page."""

import pytest
from django.contrib import admin
from django.urls import reverse

from annotate.models import Collection
from tests.factories import make_collection

pytestmark = pytest.mark.django_db

OUR_APPS = {"annotate", "evaluation"}
EXPECTED = {
    "annotate.collection",
    "annotate.membership",
    "annotate.level",
    "annotate.question",
    "annotate.answersynset",
    "annotate.answerstring",
    "annotate.judgmentevent",
    "evaluation.run",
    "evaluation.runanswer",
}


def registered():
    return {m: a for m, a in admin.site._registry.items() if m._meta.app_label in OUR_APPS}


def test_every_model_is_registered_with_list_search_and_filters():
    models = registered()
    assert {m._meta.label_lower for m in models} == EXPECTED
    for model, model_admin in models.items():
        assert model_admin.list_display != ("__str__",), model
        assert model_admin.search_fields, model
        assert model_admin.list_filter, model


def test_admin_pages_render_with_the_demo_data(client, demo):
    from django.contrib.auth import get_user_model
    from django.utils.html import escape

    from annotate.models import JudgmentEvent

    client.force_login(get_user_model().objects.get(username="admin"))
    make_collection(slug="second")  # a filter on a relation with one value is hidden
    index = client.get(reverse("admin:index"))
    assert index.status_code == 200
    for model in registered():
        assert (
            escape(str(model._meta.verbose_name_plural.capitalize())) in index.content.decode()
        ), model
    for model, model_admin in registered().items():
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        r = client.get(changelist)
        assert r.status_code == 200, changelist
        cl = r.context["cl"]
        assert cl.result_count == model.objects.count() > 0, changelist
        for q, found in (("a", True), ("no-such-text-zq", False)):  # the search filters
            searched = client.get(changelist, {"q": q})
            assert searched.status_code == 200, changelist
            assert (searched.context["cl"].result_count > 0) == found, (changelist, q)
        assert len(cl.filter_specs) == len(model_admin.list_filter), changelist
        for spec in cl.filter_specs:  # follow the first choice of every filter
            choices = [c for c in spec.choices(cl) if not c.get("selected")]
            assert choices, (changelist, spec.title)
            filtered = client.get(changelist + choices[0]["query_string"])
            assert filtered.status_code == 200, (changelist, choices[0]["query_string"])
            assert filtered.context["cl"].result_count <= cl.result_count
        obj = model.objects.first()
        change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        page = client.get(change)
        assert page.status_code == 200, change
        html = page.content.decode()
        assert escape(str(obj)) in html, change
        # the audit trail is append-only: its events are shown, never saved or deleted
        assert ('name="_save"' in html) == (model is not JudgmentEvent), change
        add = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
        page = client.get(add)
        assert page.status_code == 200, add
        assert f"Add {opts.verbose_name}" in page.content.decode(), add
    assert Collection.objects.filter(slug="demo").exists()
