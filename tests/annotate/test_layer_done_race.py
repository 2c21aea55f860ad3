"""The last two layers of a question marked done at once (PostgreSQL: real row locks): the
agreement step runs exactly once.  Each call waits at a barrier right before it looks
whether every layer is done, so without the question's lock both would look before either
committed, both would see the other open, and the question would never reach gold.

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/annotate/test_layer_done_race.py"""

import threading

import pytest

from annotate import layer_state, layers
from annotate.models import AnswerString, JudgingLayer, JudgmentEvent, LayerRequest
from tests.factories import add_member, make_collection, make_question, make_user
from tests.race import race

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_two_last_layers_done_at_once_reach_the_agreement_step_once(monkeypatch):
    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, unjudged=["Kawabata", "Oe"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    for layer, user in ((la, a), (lb, b)):
        for s in AnswerString.objects.filter(question=q):
            layers.layer_judge(layer=layer, string=s.pk, by=user)  # both: incorrect
    # both calls meet here before looking (a call held back by the lock waits in vain,
    # then goes on when the other has committed)
    meet = threading.Barrier(2, timeout=3)
    looked = layer_state.layers_complete

    def complete_after_meeting(question_id):
        try:
            meet.wait()
        except threading.BrokenBarrierError:
            pass
        return looked(question_id)

    monkeypatch.setattr(layers, "layers_complete", complete_after_meeting)
    results = race(
        lambda: layers.layer_mark_done(layer=la.pk, by=a),
        lambda: layers.layer_mark_done(layer=lb.pk, by=b),
    )
    assert results == ["ok", "ok"]
    assert JudgmentEvent.objects.filter(question=q, action="layers_agree").count() == 1
    assert not AnswerString.objects.filter(question=q, judged_at__isnull=True).exists()
    assert LayerRequest.objects.get(question=q).gold_at is not None
