"""The admin shows every model of both apps: list (with search and each filter) and add page."""

import pytest
from django.contrib import admin
from django.urls import reverse

from annotate.models import Collection

pytestmark = pytest.mark.django_db

OUR_APPS = {"annotate", "evaluation"}
EXPECTED = {"annotate.collection", "annotate.membership", "annotate.level", "annotate.question",
            "annotate.answersynset", "annotate.answerstring", "annotate.judgmentevent",
            "evaluation.run", "evaluation.runanswer"}


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
    client.force_login(get_user_model().objects.get(username="admin"))
    assert client.get(reverse("admin:index")).status_code == 200
    for model in registered():
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        r = client.get(changelist, {"q": "a"})
        assert r.status_code == 200, changelist
        for spec in r.context["cl"].filter_specs:  # follow the first choice of every filter
            choices = [c for c in spec.choices(r.context["cl"]) if not c.get("selected")]
            if choices:
                assert client.get(changelist + choices[0]["query_string"]).status_code == 200
        obj = model.objects.first()
        assert obj is not None, opts.label
        change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        assert client.get(change).status_code == 200, change
        add = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
        assert client.get(add).status_code in (200, 403), add  # 403: append-only audit
    assert Collection.objects.filter(slug="demo").exists()
