"""The archive import writes its run answers with the foreign keys' per-row checks paused
where PostgreSQL lets it (``rows.triggers_paused``), and checks the keys in one query
instead: the per-row checks, queued until the commit, were most of a size-M import's
commit (bench/archive_bench.py).  A role that may not pause them imports as before."""

import uuid

import pytest
from django.db import IntegrityError, connection, transaction

from evaluation.archive import importing
from evaluation.archive.rows import insert_rows, triggers_paused
from evaluation.models import RunAnswer
from tests.factories import make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def _role() -> str:
    with connection.cursor() as cur:
        cur.execute("SHOW session_replication_role")
        return cur.fetchone()[0]


def test_sqlite_runs_the_block_as_usual():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    with triggers_paused() as paused:
        assert paused is False


@pytest.mark.postgres(reason="session_replication_role is PostgreSQL's")
def test_the_role_is_put_back_after_the_block():
    with transaction.atomic():
        with triggers_paused() as paused:
            assert paused and _role() == "replica"
        assert _role() == "origin"


@pytest.mark.postgres(reason="session_replication_role is PostgreSQL's")
def test_a_role_that_may_not_pause_triggers_writes_as_usual():
    name = f"plain_{uuid.uuid4().hex[:12]}"
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"CREATE ROLE {name} NOLOGIN")  # rolled back with the test
        cur.execute(f"SET LOCAL ROLE {name}")
        with triggers_paused() as paused:
            assert paused is False
        assert _role() == "origin"
        cur.execute("RESET ROLE")


@pytest.mark.postgres(reason="session_replication_role is PostgreSQL's")
def test_the_set_based_check_finds_an_answer_naming_no_question():
    owner = make_user()
    c = make_collection()
    q = make_question(collection=c, qid="Q1")
    run = make_run(collection=c, owner=owner, name="r1", answers={})
    with pytest.raises(IntegrityError), transaction.atomic():
        with triggers_paused() as paused:
            assert paused
            n = insert_rows(
                RunAnswer,
                ["run", "question", "rank", "text", "key", "score"],
                [(run.pk, q.pk, 1, "a", "a", None), (run.pk, q.pk + 10_000, 2, "b", "b", None)],
            )
        # what ``_answers`` checks: one answer names no question
        assert importing._answers_with_keys([run.pk]) == n - 1
        raise IntegrityError("as _answers does")
