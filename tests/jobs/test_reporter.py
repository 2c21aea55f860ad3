"""The reporter thread writes a running job's progress and heartbeat through a connection
of its own, and reads the cancel flag; when the database drops that connection (a
restart, an administrator's pg_terminate_backend) it connects again on its next tick."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from jobs.models import Job, JobStatus
from jobs.progress import Progress, Reporter
from tests.factories import make_user

pytestmark = [
    pytest.mark.postgres(reason="drops the reporter's connection on the server"),
    # the reporter's own connection must see the job's row: committed rows
    pytest.mark.django_db(transaction=True),
]


def _wait(check, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def _other_backends() -> list[int]:
    """The server processes of this database's other connections (the reporter's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return [pid for (pid,) in cursor.fetchall()]


def test_the_reporter_connects_again_after_the_database_dropped_it():
    job = Job.objects.create(
        kind="t", label="t", func="x", user=make_user(username="o"), status=JobStatus.RUNNING
    )
    progress = Progress()
    progress.phase("Reading", total=10, unit="lines")
    progress(4)
    reporter = Reporter(job.pk, progress, every=0.05)
    reporter.start()
    try:
        assert _wait(lambda: Job.objects.get(pk=job.pk).done == 4)
        backends = _other_backends()
        assert len(backends) == 1
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", backends)
        progress(7)
        # written through a new connection
        assert _wait(lambda: Job.objects.get(pk=job.pk).done == 7)
        assert _other_backends() not in ([], backends)
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)
        assert _wait(progress.cancelled.is_set)
    finally:
        reporter.stop()
    assert not reporter.is_alive()
