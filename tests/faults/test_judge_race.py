"""Two assessors judging one question at once through gunicorn (threads) on PostgreSQL:
no response >= 500 (a workspace read racing a write was a KeyError), and exactly one event
and one version bump per acknowledged write -- a smaller run of bench/judge_race.py."""

import pytest
from django.db import connection

from annotate.models import JudgmentEvent, Question
from bench.judge_race import PASSWORD, race, report, seed, verify

from .helpers import free_port, start_gunicorn, stop

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_two_assessors_judging_one_question_at_once(tmp_path):
    qpk, names = seed(2)
    events_before = JudgmentEvent.objects.filter(question_id=qpk).count()
    version_before = Question.objects.get(pk=qpk).version
    connection.close()
    port = free_port()
    server = start_gunicorn(port, tmp_path / "gunicorn.log", workers=2, threads=2)
    try:
        tally = race(
            base=f"http://127.0.0.1:{port}",
            question=qpk,
            usernames=names,
            password=PASSWORD,
            threads=4,
            requests=200,
        )
    finally:
        stop(server)
    checks = verify(
        question=qpk, events_before=events_before, version_before=version_before, tally=tally
    )
    print(report(tally, checks, users=2, threads=4))
    assert tally["sent"] == 200
    assert tally["status"].get("5xx", 0) == 0 and "error" not in tally["status"], tally["errors"]
    assert tally["unanswered_writes"] == 0
    assert tally["acked"] > 50 and tally["refused"] > 0  # they really got in each other's way
    assert checks["events"] == tally["acked"] == checks["version_bumps"]
    assert not checks["invariants"]
