"""Import previews list the strings and questions an import adds, folds, skips or replaces."""

import pytest

from annotate.imports import import_plan
from tests.factories import make_collection, make_question

pytestmark = pytest.mark.django_db


def _lists(plan):
    return {lst.css_id: lst.rows for lst in plan.lists}


def test_questions_preview_lists_creations_and_text_changes():
    c = make_collection()
    make_question(collection=c, qid="Q1", text="Old text?")
    make_question(collection=c, qid="Q3", text="Same?")
    data = b"question_id,question\nQ1,New text?\nQ2,Second?\nQ3,Same?\n"
    lists = _lists(import_plan(collection=c, kind="questions", data=data, filename="q.csv"))
    assert lists["preview-create"] == [("Q2", "Second?")]
    assert lists["preview-update"] == [("Q1", "Old text?", "New text?")]


def test_flat_preview_lists_added_variant_and_skipped_rows():
    c = make_collection()
    make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]])
    make_question(collection=c, qid="Q2")
    flat = b"question_id,answer\nQ1,paris\nQ1,Lyon\nQ2,Tokyo\nQ2,tokyo\nQ2,Tokyo\nQ1,Paris\n"
    lists = _lists(import_plan(collection=c, kind="flat", data=flat, filename="a.csv"))
    assert lists["preview-add"] == [(3, "Q1", "Lyon"), (4, "Q2", "Tokyo")]
    assert lists["preview-variants"] == [
        (2, "Q1", "paris", 'a variant of "Paris"'),
        (5, "Q2", "tokyo", 'a variant of "Tokyo"'),
    ]
    assert lists["preview-skip"] == [
        (6, "Q2", "Tokyo", '"Tokyo" is earlier in the file'),
        (7, "Q1", "Paris", '"Paris" is in the collection'),
    ]


def test_judgments_preview_lists_the_judgments_it_changes_or_removes():
    c = make_collection()
    make_question(
        collection=c,
        qid="Q1",
        synsets=[[("Paris", "S"), ("Lutetia", "A")]],
        incorrect=["Lyon"],
        unjudged=["Marseille", "Nice"],
    )
    data = (
        "question_id,synset_id,answer,level\n"
        "Q1,1,Paris,S\n"  # unchanged: not listed
        "Q1,1,Lyon,B\n"  # incorrect -> correct
        "Q1,,Marseille,\n"
    )  # unjudged -> incorrect
    plan = import_plan(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert plan.ok, plan.issues
    rows = _lists(plan)["preview-replace"]
    assert rows == [
        ("Q1", "Lutetia", "synset 1, level A", "removed (not in the file)"),
        ("Q1", "Lyon", "judged incorrect", "synset 1, level B"),
        ("Q1", "Marseille", "unjudged", "judged incorrect"),
    ]


def test_the_import_page_shows_the_lists(client):
    from tests.factories import add_member, make_user

    c = make_collection(slug="pv")
    make_question(collection=c, qid="Q1", text="Old?")
    u = make_user(username="pv-org")
    add_member(collection=c, user=u, role="organizer")
    client.force_login(u)
    from django.core.files.uploadedfile import SimpleUploadedFile

    f = SimpleUploadedFile("q.csv", b"question_id,question\nQ1,New <b>text</b>?\n")
    page = client.post(
        "/collections/pv/import/", {"kind": "questions", "file": f}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'id="preview-update"' in page and "New &lt;b&gt;text&lt;/b&gt;?" in page
