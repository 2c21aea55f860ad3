"""The jobs core: a job runs its function once, records how it ended (result, errors with
their lines, cancel), refuses a conflicting job on the same collection, fails a job whose
worker died, and its pages show only one's own jobs."""

from __future__ import annotations

import os
import socket

import pytest
from django.urls import reverse

from jobs.models import Conflict, Job, JobStatus
from jobs.progress import Progress
from jobs.runner import run_job
from jobs.services import JobRefused, job_cancel, job_start, jobs_reap
from tests.factories import make_collection, make_user

pytestmark = pytest.mark.django_db

SAMPLE = "tests.jobs.sample_jobs"


def _start(user, collection, func="rename", **kw):
    return job_start(
        kind="test",
        label=f"Test {func}",
        func=f"{SAMPLE}.{func}",
        user=user,
        collection_id=collection.pk if collection else None,
        **kw,
    )


def test_a_job_runs_and_records_its_result():
    user = make_user(username="org")
    collection = make_collection()
    job = _start(user, collection, params={"name": "Renamed", "steps": 4})
    assert job.status == JobStatus.SUCCEEDED
    assert job.message == "Renamed to Renamed."
    assert job.result["url"] == "/"
    assert (job.done, job.total, job.unit, job.phase) == (4, 4, "steps", "Renaming")
    collection.refresh_from_db()
    assert collection.name == "Renamed"


def test_a_failed_job_keeps_every_error_with_its_line():
    user = make_user(username="org")
    job = _start(user, None, func="refuse", input=b"x", input_name="judgments.csv")
    assert job.status == JobStatus.FAILED
    assert job.message == "The file was not imported."
    assert job.errors == [
        {"file": "judgments.csv", "line": 3, "message": "expected 4 columns, found 2"},
        {"file": "judgments.csv", "line": 9, "message": "unknown level 'Z'"},
    ]
    assert job.input is None  # the input is not kept once the job ended


def test_a_crash_fails_the_job_without_a_traceback_for_the_user():
    job = _start(make_user(username="org"), None, func="crash")
    assert job.status == JobStatus.FAILED
    assert "internal error" in job.message
    assert "boom" not in job.message


def test_the_input_reaches_the_job():
    job = _start(make_user(username="org"), None, func="echo_input", input=b"abc\x00def")
    assert job.result["size"] == 7


def test_a_cancelled_job_writes_nothing():
    user = make_user(username="org")
    collection = make_collection(name="Before")
    job = Job.objects.create(
        kind="test",
        label="t",
        func=f"{SAMPLE}.rename",
        user=user,
        collection=collection,
        params={"name": "After", "steps": 3},
    )
    cancelled = job_cancel(job)
    assert cancelled.status == JobStatus.CANCELLED
    assert run_job(job.pk).status == JobStatus.CANCELLED  # the worker finds it cancelled
    collection.refresh_from_db()
    assert collection.name == "Before"


def test_cancel_mid_way_rolls_the_transaction_back(monkeypatch):
    user = make_user(username="org")
    collection = make_collection(name="Before")
    job = Job.objects.create(
        kind="test",
        label="t",
        func=f"{SAMPLE}.rename",
        user=user,
        collection=collection,
        params={"name": "After", "steps": 3},
    )
    calls = []

    def listener(snapshot):
        calls.append(snapshot.done)
        if snapshot.done == 2:
            progress_holder[0].cancelled.set()

    progress_holder: list[Progress] = []
    original = Progress.__init__

    def init(self, listener_=None):
        original(self, listener_)
        progress_holder.append(self)

    monkeypatch.setattr(Progress, "__init__", init)
    ended = run_job(job.pk, listener=listener)
    assert ended.status == JobStatus.CANCELLED
    assert calls[-1] == 2
    collection.refresh_from_db()
    assert collection.name == "Before"


def test_a_conflicting_job_is_refused_with_who_holds_the_collection():
    user = make_user(username="org")
    collection = make_collection()
    Job.objects.create(
        kind="mode",
        label="Matching mode change",
        func=f"{SAMPLE}.rename",
        user=user,
        collection=collection,
        conflict=Conflict.EXCLUSIVE,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    with pytest.raises(JobRefused, match=r"Matching mode change .*started by org"):
        _start(user, collection, params={"name": "x"})
    # a job on another collection, or one that conflicts with none, still starts
    other = make_collection(name="Other")
    assert _start(user, other, params={"name": "y"}).status == JobStatus.SUCCEEDED
    assert (
        _start(user, collection, params={"name": "z"}, conflict=Conflict.NONE).status
        == JobStatus.SUCCEEDED
    )


def test_an_exclusive_job_waits_for_no_shared_one():
    user = make_user(username="org")
    collection = make_collection()
    Job.objects.create(
        kind="upload",
        label="Run upload",
        func=f"{SAMPLE}.rename",
        user=user,
        collection=collection,
        conflict=Conflict.SHARED,
        status=JobStatus.QUEUED,
    )
    with pytest.raises(JobRefused, match=r"Run upload .*waiting to run"):
        _start(user, collection, params={"name": "x"}, conflict=Conflict.EXCLUSIVE)
    # shared beside shared is fine
    assert _start(user, collection, params={"name": "x"}).status == JobStatus.SUCCEEDED


def test_a_job_whose_worker_died_is_failed():
    user = make_user(username="org")
    dead = Job.objects.create(
        kind="t",
        label="t",
        func="x",
        user=user,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{2**22 + 12345}",  # above pid_max: never alive
    )
    alive = Job.objects.create(
        kind="t",
        label="t",
        func="x",
        user=user,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    assert jobs_reap() == 1
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == JobStatus.FAILED and "nothing was written" in dead.message
    assert alive.status == JobStatus.RUNNING


def test_job_pages_show_only_ones_own_jobs(client):
    owner, other = make_user(username="owner"), make_user(username="other")
    job = _start(owner, None, func="refuse", input_name="j.csv")
    client.force_login(other)
    assert client.get(reverse("jobs:job-detail", args=[job.pk])).status_code == 404
    assert client.get(reverse("jobs:job-status", args=[job.pk])).status_code == 404
    assert client.post(reverse("jobs:job-cancel", args=[job.pk])).status_code == 404
    assert "Test refuse" not in client.get(reverse("jobs:job-list")).content.decode()
    client.force_login(owner)
    page = client.get(reverse("jobs:job-detail", args=[job.pk])).content.decode()
    assert "j.csv, line 3: expected 4 columns, found 2" in page
    assert "Test refuse" in client.get(reverse("jobs:job-list")).content.decode()


def test_a_running_jobs_panel_polls_and_offers_cancel(client):
    owner = make_user(username="owner")
    job = Job.objects.create(
        kind="t",
        label="Big import",
        func="x",
        user=owner,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        phase="Reading the file",
        done=250,
        total=1000,
        unit="lines",
    )
    client.force_login(owner)
    panel = client.get(reverse("jobs:job-status", args=[job.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in panel
    assert "250 of 1000 lines (25 %)" in panel
    assert "Cancel" in panel
    client.post(reverse("jobs:job-cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.cancel_requested


def test_a_jobs_file_is_downloaded_by_its_owner_only(client):
    owner, other = make_user(username="owner"), make_user(username="other")
    job = _start(owner, None, func="make_file")
    url = reverse("jobs:job-output", args=[job.pk, job.result["output"]])
    client.force_login(other)
    assert client.get(url).status_code == 404
    client.force_login(owner)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="report.csv"'
    assert response.content == b"a,b\n=1,2\n"
    assert url in client.get(reverse("jobs:job-detail", args=[job.pk])).content.decode()
