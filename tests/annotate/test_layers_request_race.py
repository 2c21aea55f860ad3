"""Two requests for layers on the same questions at once, with different assessors
(PostgreSQL: real row locks): the questions end with k layers each, as when the requests
come one after the other (the second is refused: every question has its layers already).
Each call waits at a barrier right after it read the layers the questions have, so
without the questions' locks both would read none, and both would give every question k
layers of its own assessors (red team: 30 questions x 4 layers with k = 2).

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/annotate/test_layers_request_race.py"""

import threading
from collections import Counter

import pytest

from annotate import layers
from annotate.models import JudgingLayer, JudgmentEvent, LayerRequest
from tests.factories import add_member, make_collection, make_question, make_user
from tests.race import race

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_two_requests_at_once_give_each_question_k_layers(monkeypatch):
    c = make_collection()
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    people = [make_user() for _ in range(4)]
    for u in people:
        add_member(collection=c, user=u, role="assessor")
    questions = [make_question(collection=c, unjudged=["a", "b"]) for _ in range(30)]
    meet = threading.Barrier(2, timeout=3)
    looked = layers._to_layer

    def to_layer_then_meet(*args, **kwargs):
        out = looked(*args, **kwargs)
        try:
            meet.wait()  # a call held back by the lock waits in vain, then goes on
        except threading.BrokenBarrierError:
            pass
        return out

    monkeypatch.setattr(layers, "_to_layer", to_layer_then_meet)
    results = race(
        lambda: layers.layers_request(
            collection=c, questions=questions, assessors=people[:2], by=org, k=2
        ),
        lambda: layers.layers_request(
            collection=c, questions=questions, assessors=people[2:], by=org, k=2
        ),
    )
    # one request gives the layers, the other is refused, as one after the other
    assert sorted(results) == ["conflict", "ok"]
    per_question = Counter(JudgingLayer.objects.values_list("question_id", flat=True))
    assert per_question == {q.pk: 2 for q in questions}
    # all of one request's assessors, never a mix
    pairs = {
        frozenset(JudgingLayer.objects.filter(question=q).values_list("assessor_id", flat=True))
        for q in questions
    }
    assert len(pairs) == 1
    assert LayerRequest.objects.filter(question__in=questions).count() == 30
    assert JudgmentEvent.objects.filter(action="layers_request").count() == 1
