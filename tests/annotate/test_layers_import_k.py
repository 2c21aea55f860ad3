"""Issue 27, item 4: the layers import keeps a question to k layers, as ``layers_request``
does.  Before, it did not look at k: after a request for k = 2 layers, an import naming two
other assessors gave every question 4 layers (one after the other, no race needed).  Now
the import refuses such a question naming the file and the line of the first layer too
many; a file that replaces the layers a question has, or tops it up to k, goes in; a
question without a request gets one whose k is the layers the file gives it.

Run on PostgreSQL as well: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_h3 \
.venv/bin/pytest tests/annotate/test_layers_import_k.py"""

from collections import Counter

import pytest

from annotate.edits import Conflict
from annotate.imports import ImportRefused, collection_import, import_plan
from annotate.layer_io import layers_import
from annotate.layers import layers_request
from annotate.models import JudgingLayer, LayerRequest
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

HEADER = "question_id,synset_id,answer,level,assessor,done\n"


@pytest.fixture
def w():
    c = make_collection(slug="k")
    org = make_user(username="org")
    add_member(collection=c, user=org, role="organizer")
    people = [make_user(username=name) for name in ("ann", "bob", "cat", "dan")]
    for u in people:
        add_member(collection=c, user=u, role="assessor")
    questions = [make_question(collection=c, qid=f"Q{i}", unjudged=["a", "b"]) for i in (1, 2)]
    return c, org, people, questions


def layers_file(*rows: tuple[str, str]) -> bytes:
    """A layers file: one row (string "a" judged correct) per (question, assessor)."""
    return (HEADER + "".join(f"{q},1,a,S,{who},\n" for q, who in rows)).encode()


def layers_of(questions) -> dict[str, list[str]]:
    return {
        q.qid: sorted(
            JudgingLayer.objects.filter(question=q).values_list("assessor__username", flat=True)
        )
        for q in questions
    }


def test_an_import_after_a_request_cannot_pass_k(w):
    c, org, people, questions = w
    layers_request(collection=c, questions=questions, assessors=people[:2], by=org, k=2)
    before = layers_of(questions)
    data = layers_file(("Q1", "cat"), ("Q1", "dan"), ("Q2", "ann"), ("Q2", "cat"))
    result = layers_import(collection=c, data=data, filename="l.csv", by=org)
    # Q1: cat on line 2 is the first layer too many; Q2: ann's layer is replaced, cat's
    # (line 5) is the third
    assert [(i.file, i.line) for i in result.issues] == [("l.csv", 2), ("l.csv", 5)]
    assert result.issues[0].message == (
        "question 'Q1' asks for k = 2 independent layers and has 2 (by ann, bob): a layer "
        "by cat would be one too many; request more layers for it first (a larger k), or "
        "name only the assessors it has"
    )
    assert "a layer by cat" in result.issues[1].message
    assert layers_of(questions) == before == {"Q1": ["ann", "bob"], "Q2": ["ann", "bob"]}
    # the import page too: refused at the preview and when confirmed
    plan = import_plan(collection=c, kind="layers", data=data, filename="l.csv", by=org)
    assert [i.line for i in plan.issues] == [2, 5]
    with pytest.raises(ImportRefused) as e:
        collection_import(collection=c, kind="layers", data=data, filename="l.csv", by=org)
    assert [i.line for i in e.value.issues] == [2, 5]
    assert layers_of(questions) == before


def test_an_import_may_replace_the_layers_or_top_up_to_k(w):
    c, org, people, questions = w
    layers_request(collection=c, questions=questions, assessors=people[:2], by=org, k=2)
    JudgingLayer.objects.filter(question=questions[1], assessor=people[1]).delete()  # bob left
    data = layers_file(("Q1", "ann"), ("Q1", "bob"), ("Q2", "ann"), ("Q2", "cat"))
    result = layers_import(collection=c, data=data, filename="l.csv", by=org)
    assert result.issues == [] and result.layers == 4
    assert layers_of(questions) == {"Q1": ["ann", "bob"], "Q2": ["ann", "cat"]}
    assert sorted(LayerRequest.objects.values_list("k", flat=True)) == [2, 2]


def test_a_request_after_an_import_is_refused(w):
    c, org, people, questions = w
    data = layers_file(*((q.qid, who) for q in questions for who in ("cat", "dan")))
    assert layers_import(collection=c, data=data, filename="l.csv", by=org).issues == []
    with pytest.raises(Conflict, match="already have layers"):
        layers_request(collection=c, questions=questions, assessors=people[:2], by=org, k=2)
    assert layers_of(questions) == {"Q1": ["cat", "dan"], "Q2": ["cat", "dan"]}


def test_a_question_without_a_request_gets_the_files_k(w):
    c, org, _, _ = w
    data = layers_file(("Q1", "ann"), ("Q1", "bob"), ("Q1", "cat"), ("Q2", "dan"))
    assert layers_import(collection=c, data=data, filename="l.csv", by=org).issues == []
    assert dict(LayerRequest.objects.values_list("question__qid", "k")) == {"Q1": 3, "Q2": 1}
    # a fourth assessor later is one too many for Q1; Q2 is full with dan
    more = layers_file(("Q1", "dan"), ("Q2", "ann"))
    result = layers_import(collection=c, data=more, filename="more.csv", by=org)
    assert [(i.line, i.message.split(":")[0]) for i in result.issues] == [
        (2, "question 'Q1' asks for k = 3 independent layers and has 3 (by ann, bob, cat)"),
        (3, "question 'Q2' asks for k = 1 independent layers and has 1 (by dan)"),
    ]
    assert Counter(JudgingLayer.objects.values_list("question__qid", flat=True)) == {
        "Q1": 3,
        "Q2": 1,
    }
