"""Pooling a run: its answers nobody has judged go to the assessors' pool (`run_pool`)."""

import pytest

from annotate.models import AnswerString, JudgmentEvent
from evaluation.services import run_pool
from tests.factories import make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def test_pool_run_adds_distinct_new_keys_up_to_max_output_size():
    c = make_collection(max_output_size=3)
    q = make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]], incorrect=["Lyon"])
    run = make_run(
        collection=c,
        owner=make_user(),
        answers={"Q1": ["paris", "Nice", " nice ", "LYON", "Marseille"]},
    )  # Marseille is rank 5 > L'
    version = c.judgment_version
    assert run_pool(run=run) == 1
    pooled = AnswerString.objects.get(question=q, source="pool")
    assert (pooled.text, pooled.key, pooled.state) == ("Nice", "nice", "unjudged")
    c.refresh_from_db()
    q.refresh_from_db()
    assert c.judgment_version == version + 1 and c.judgments_changed_at is not None
    assert q.version == 1
    event = JudgmentEvent.objects.get(action="pool_run")
    assert event.after["added"] == 1
    assert run_pool(run=run) == 0  # idempotent
