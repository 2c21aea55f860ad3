"""A layers import and a request for layers on the same questions at once (PostgreSQL:
real row locks): the questions end with the import's k layers, as when the import comes
first and the request after (refused: every question has its layers already).  The import
takes its questions' locks and waits until the request is under way; then each waits, the
import with its layers written and not committed, the request right after it read the
layers the questions have.  Without the import's locks the request reads none and gives
every question k layers more (2k).

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/annotate/test_layers_import_race.py"""

import threading
from collections import Counter

import pytest

from annotate import layer_io, layers
from annotate.models import JudgingLayer, JudgmentEvent
from tests.factories import add_member, make_collection, make_question, make_user
from tests.race import race

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


def _wait(barrier):
    try:
        barrier.wait()  # a call held back by a lock waits in vain, then goes on
    except threading.BrokenBarrierError:
        pass


def test_a_layers_import_and_a_request_at_once_leave_k_layers(monkeypatch):
    c = make_collection()
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    people = [make_user() for _ in range(4)]
    for u in people:
        add_member(collection=c, user=u, role="assessor")
    questions = [make_question(collection=c, qid=f"Q{i}", unjudged=["a", "b"]) for i in range(10)]
    data = "question_id,synset_id,answer,level,assessor,done\n" + "".join(
        f"{q.qid},1,a,S,{u.username},\n" for q in questions for u in people[:2]
    )
    # ``written`` gives up within a second: the request held back by the import's locks
    # must get them within the lock timeout (5 s)
    started, written = threading.Barrier(2, timeout=3), threading.Barrier(2, timeout=1)
    owners, write, check = layer_io.key_owners, layer_io.layers_write, layers._check_people
    to_layer = layers._to_layer

    def owners_then_start(*args, **kwargs):  # the import, its questions locked
        out = owners(*args, **kwargs)
        _wait(started)
        return out

    def check_after_start(*args, **kwargs):  # the request, before it locks
        _wait(started)
        return check(*args, **kwargs)

    def write_then_wait(*args, **kwargs):  # the import, written, not committed
        out = write(*args, **kwargs)
        _wait(written)
        return out

    def to_layer_then_wait(*args, **kwargs):  # the request, the layers read
        out = to_layer(*args, **kwargs)
        _wait(written)
        return out

    monkeypatch.setattr(layer_io, "key_owners", owners_then_start)
    monkeypatch.setattr(layers, "_check_people", check_after_start)
    monkeypatch.setattr(layer_io, "layers_write", write_then_wait)
    monkeypatch.setattr(layers, "_to_layer", to_layer_then_wait)
    results = race(
        lambda: layer_io.layers_import(
            collection=c, data=data.encode(), filename="layers.csv", by=org
        ),
        lambda: layers.layers_request(
            collection=c, questions=questions, assessors=people[2:], by=org, k=2
        ),
    )
    # the import gives the layers, the request is refused, as one after the other
    assert results == ["ok", "conflict"]
    per_question = Counter(JudgingLayer.objects.values_list("question_id", flat=True))
    assert per_question == {q.pk: 2 for q in questions}
    assert set(JudgingLayer.objects.values_list("assessor_id", flat=True)) == {
        u.pk for u in people[:2]
    }
    assert JudgmentEvent.objects.filter(action="layers_import").count() == 1
    assert JudgmentEvent.objects.filter(action="layers_request").count() == 0
