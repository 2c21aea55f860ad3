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
# shown, not changed (annotate/admin.py, evaluation/admin.py); and what is never added here
READ_ONLY = {
    "annotate.judgmentevent",
    "annotate.level",
    "annotate.answersynset",
    "annotate.answerstring",
    "evaluation.runanswer",
}
NO_ADD = READ_ONLY - {"annotate.judgmentevent"} | {"evaluation.run"}


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
        # the audit trail is append-only, judgments and run answers are read-only: shown,
        # never saved or deleted
        assert ('name="_save"' in html) == (opts.label_lower not in READ_ONLY), change
        add = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
        page = client.get(add)
        if opts.label_lower in NO_ADD:
            assert page.status_code == 403, add
            continue
        assert page.status_code == 200, add
        assert f"Add {opts.verbose_name}" in page.content.decode(), add
    assert Collection.objects.filter(slug="demo").exists()


def test_admin_cannot_change_a_judgment_or_the_matching_mode_and_question_edits_count(client, demo):
    """A judgment changed in the admin would skip the judging writes (lock, keys, audit
    trail, judgment version): strings, synsets and levels are read-only there, the mode
    is changed on its page; adding or deleting a question bumps the judgment version."""
    from django.contrib.auth import get_user_model

    from annotate.models import AnswerString, Question

    client.force_login(get_user_model().objects.get(username="admin"))
    string = AnswerString.objects.filter(question__collection=demo, level__isnull=False).first()
    url = reverse("admin:annotate_answerstring_change", args=[string.pk])
    response = client.post(url, {"text": "changed", "key": "changed"})
    assert response.status_code == 403
    assert AnswerString.objects.get(pk=string.pk).text == string.text
    page = client.get(reverse("admin:annotate_collection_change", args=[demo.pk]))
    assert 'name="matching_mode"' not in page.content.decode()
    # a question with judged strings is not deleted here (its strings are read-only)
    question = Question.objects.filter(collection=demo, strings__isnull=False).last()
    delete = reverse("admin:annotate_question_delete", args=[question.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert Question.objects.filter(pk=question.pk).exists()
    # one more question to score: the stored scores' version goes stale
    version = Collection.objects.get(pk=demo.pk).judgment_version
    add = reverse("admin:annotate_question_add")
    context = client.get(add).context
    form = context["adminform"].form
    (synsets,) = context["inline_admin_formsets"]
    data = {
        "qid": "ADMIN-Q",
        "text": "Added in the admin?",
        "collection": demo.pk,
        f"{synsets.formset.prefix}-TOTAL_FORMS": "0",
        f"{synsets.formset.prefix}-INITIAL_FORMS": "0",
    }
    assert set(form.fields) >= {"qid", "text", "collection"}
    response = client.post(add, data)
    assert response.status_code == 302, (
        response.context["adminform"].form.errors,
        [f.formset.non_form_errors() for f in response.context["inline_admin_formsets"]],
    )
    assert Collection.objects.get(pk=demo.pk).judgment_version == version + 1
    added = Question.objects.get(collection=demo, qid="ADMIN-Q")
    delete = reverse("admin:annotate_question_delete", args=[added.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302
    assert Collection.objects.get(pk=demo.pk).judgment_version == version + 2
