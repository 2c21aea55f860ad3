"""The judgments CSV's rows read as tuples (``annotate.judgments_csv``, issue 24) give the
same bytes as the export built from model instances, the way it was written before: on
the demo collection and on one with every kind of row (variants, labels and ordinals,
judged incorrect, no assessor, a formula-like and a multi-line answer)."""

import pytest
from django.db.models import F

from annotate.exports import _synset_ids, export_judgments
from annotate.imports import collection_import
from annotate.judgments_csv import HEADER, judgment_rows
from annotate.models import AnswerString
from evaluation.metrics.csvio import write_csv
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def _by_instances(collection):
    """The export as it was: a model instance and three related ones per judged string."""
    synset_ids = _synset_ids(collection)
    strings = (
        AnswerString.objects.filter(question__collection=collection, judged_at__isnull=False)
        .select_related("question", "level", "judged_by")
        .order_by("question_id", F("synset__ordinal").asc(nulls_last=True), "id")
    )
    rows = (
        [
            s.question.qid,
            synset_ids[s.synset_id] if s.synset_id else "",
            text,
            s.level.code if s.level_id else "",
            s.question.text,
            s.judged_by.get_username() if s.judged_by_id else "",
            s.judged_at.isoformat(timespec="seconds"),
        ]
        for s in strings.iterator(2000)
        for text in (s.text, *s.variants)
    )
    return write_csv(HEADER, rows)


def _by_rows(collection):
    return write_csv(HEADER, judgment_rows(collection, _synset_ids(collection)))


def test_demo_collection_same_bytes(demo):
    expected = _by_instances(demo)
    assert expected.count("\n") > 10
    assert _by_rows(demo) == expected == export_judgments(demo)


def test_every_kind_of_row_same_bytes():
    c = make_collection(slug="kinds")
    make_question(collection=c, qid="Q1", text="Which president resigned?")
    make_question(collection=c, qid="Q2", text='A "quoted",\nmulti-line question')
    make_question(collection=c, qid="Q3", text="Unjudged")
    data = (
        "question_id,synset_id,answer,level\n"
        "Q1,gold,Richard Nixon,S\n"
        "Q1,Q1-b,Nixon,A\n"
        "Q1,gold,Richard Nixon.,S\n"
        "Q1,,Gerald Ford,\n"
        "Q1,,gerald ford,\n"
        "Q2,,=SUM(A1),\n"
        'Q2,7,"two\nlines",B\n'
        "Q2,,x,\n"
    )
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert any(
        v
        for v in AnswerString.objects.filter(question__collection=c).values_list(
            "variants", flat=True
        )
    )
    # a string judged by an assessor
    s = AnswerString.objects.get(question__qid="Q2", text="x")
    s.judged_by = make_user(username="judge")
    s.save(update_fields=["judged_by"])
    expected = _by_instances(c)
    assert "judge" in expected and "Nixon" in expected
    assert _by_rows(c) == expected == export_judgments(c)
