"""How a job's end is recorded when it ends badly: a function that no longer imports, a
result or errors JSON cannot hold as they are, the worker stopped under it, RQ's timeout,
a database that fails the final write, a queue that does not answer."""

from __future__ import annotations

import pytest
from django.db import OperationalError, transaction
from django.db.models import QuerySet

from jobs import runner
from jobs.models import Job, JobStatus
from jobs.runner import run_job
from jobs.services import job_start
from tests.factories import make_collection, make_user

pytestmark = pytest.mark.django_db

SAMPLE = "tests.jobs.sample_jobs"


def _job(func: str, collection=None, **kw) -> Job:
    return Job.objects.create(
        kind="test",
        label="t",
        func=func,
        user=make_user(username=f"org{Job.objects.count()}"),
        collection=collection,
        **kw,
    )


def test_a_job_whose_function_no_longer_imports_fails_saying_so():
    ended = run_job(_job("tests.jobs.sample_jobs.renamed_since").pk)
    assert ended.status == JobStatus.FAILED
    assert "no job function 'tests.jobs.sample_jobs.renamed_since'" in ended.message
    assert "nothing was written" in ended.message
    ended = run_job(_job("no_such_app.jobs.run").pk)
    assert ended.status == JobStatus.FAILED and "no job function" in ended.message


def test_a_result_json_cannot_hold_as_it_is_still_ends_the_job():
    ended = run_job(_job(f"{SAMPLE}.odd_result").pk)
    assert ended.status == JobStatus.SUCCEEDED
    assert ended.result == {"message": "Odd.", "count": 3, "mean": "0.5", "on": "2026-01-02"}


def test_errors_with_numpy_line_numbers_are_kept():
    ended = run_job(_job(f"{SAMPLE}.refuse_with_numpy_lines").pk)
    assert ended.status == JobStatus.FAILED
    assert ended.errors == [{"file": "a.tsv", "line": 7, "message": "bad"}]


def test_a_worker_stopped_under_a_job_fails_it_saying_so_and_stops():
    collection = make_collection(name="Before")
    job = _job(f"{SAMPLE}.stopped", collection=collection)
    with pytest.raises(SystemExit):
        run_job(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "was stopped" in job.message and "nothing was written" in job.message
    collection.refresh_from_db()
    assert collection.name == "Before"


def test_rqs_timeout_is_named():
    ended = run_job(_job(f"{SAMPLE}.timed_out").pk)
    assert ended.status == JobStatus.FAILED
    assert ended.message == (
        "The job ran longer than the queue allows and was stopped (Task exceeded maximum "
        "timeout value (21600 seconds)); nothing was written."
    )


@pytest.mark.django_db(transaction=True)  # a worker's connection, in no transaction
def test_the_final_write_is_tried_again_when_the_database_fails(monkeypatch):
    collection = make_collection(name="Before")
    job = _job(f"{SAMPLE}.rename", collection=collection, params={"name": "After", "steps": 2})
    original = QuerySet.update
    failures = []

    def update(self, **fields):
        if "finished_at" in fields and len(failures) < 2:
            failures.append(fields["status"])
            raise OperationalError("server closed the connection unexpectedly")
        return original(self, **fields)

    monkeypatch.setattr(QuerySet, "update", update)
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    ended = run_job(job.pk)
    assert failures == [JobStatus.SUCCEEDED, JobStatus.SUCCEEDED]
    assert ended.status == JobStatus.SUCCEEDED and ended.message == "Renamed to After."


def test_a_queue_that_does_not_answer_fails_the_job_at_once(
    settings, django_capture_on_commit_callbacks
):
    # RQ on a port nothing listens on
    settings.RQ_QUEUES = {"default": {"URL": "redis://127.0.0.1:9/0", "DEFAULT_TIMEOUT": 60}}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    with django_capture_on_commit_callbacks(execute=True):
        job = job_start(
            kind="test",
            label="t",
            func=f"{SAMPLE}.rename",
            user=make_user(username="org"),
            collection_id=make_collection().pk,
            params={"name": "x"},
        )
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.message.startswith("The job could not be queued")
    assert job.finished_at is not None


class _Reporter:
    started: list[int] = []

    def __init__(self, job_id, progress):
        self.job_id = job_id

    def start(self):
        _Reporter.started.append(self.job_id)

    def stop(self):
        pass


@pytest.mark.django_db(transaction=True)  # a command's connection, in no transaction
def test_a_job_run_inline_beats_like_a_workers_but_under_the_immediate_backend(
    settings, monkeypatch
):
    # a command's inline job (hours of it, maybe) must not look dead to a web server on
    # another machine: it writes its heartbeat as a worker's does
    monkeypatch.setattr(runner, "Reporter", _Reporter)
    _Reporter.started = []
    immediate = run_job(_job(f"{SAMPLE}.echo_input").pk)
    assert _Reporter.started == []  # the tests' backend: rows in the test's transaction
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    }
    inline = run_job(_job(f"{SAMPLE}.echo_input").pk)
    assert _Reporter.started == [inline.pk]
    assert immediate.status == inline.status == JobStatus.SUCCEEDED
    # run inside a caller's transaction, its claim is not committed: nothing to beat on
    with transaction.atomic():
        in_transaction = run_job(_job(f"{SAMPLE}.echo_input").pk)
    assert _Reporter.started == [inline.pk]
    assert in_transaction.status == JobStatus.SUCCEEDED
