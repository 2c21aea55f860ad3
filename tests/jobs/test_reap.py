"""Which jobs the reaper fails: a running job whose worker is gone, told by its pid only
where the pid means the same process (same host, container and boot, and not reused), by
its heartbeat anywhere else; a queued job its queue will never run."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from jobs import services
from jobs.models import Job, JobStatus
from jobs.services import job_start, jobs_reap
from jobs.workers import process_started, this_machine, worker_alive, worker_name
from tests.factories import make_collection, make_user

pytestmark = pytest.mark.django_db

SAMPLE = "tests.jobs.sample_jobs"
HOST = socket.gethostname()


def _running(worker: str, heartbeat_age: float | None = 0) -> Job:
    return Job.objects.create(
        kind="t",
        label="t",
        func="x",
        status=JobStatus.RUNNING,
        worker=worker,
        heartbeat_at=None
        if heartbeat_age is None
        else timezone.now() - timedelta(seconds=heartbeat_age),
    )


def _status(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def test_this_process_is_an_alive_worker():
    name = worker_name()
    host, pid, where = name.split(":")
    assert (host, int(pid)) == (HOST, os.getpid())
    assert where == f"{this_machine()}-{process_started(os.getpid())}"
    assert this_machine() and process_started(os.getpid()).isdigit()
    assert worker_alive(name) is True


def test_a_worker_in_another_container_under_the_same_host_name_is_judged_by_heartbeat():
    # pid 1 is alive here, but in another pid namespace (or boot) it is another process
    fresh = _running(f"{HOST}:1:0123456789ab-5", heartbeat_age=5)
    silent = _running(f"{HOST}:1:0123456789ab-5", heartbeat_age=600)
    never = _running(f"{HOST}:1:0123456789ab-5", heartbeat_age=None)
    assert worker_alive(fresh.worker) is None
    assert jobs_reap() == 2
    assert (_status(fresh), _status(silent), _status(never)) == ("running", "failed", "failed")


def test_a_worker_whose_pid_was_given_to_another_process_is_dead():
    # this very pid, but a process that started at another time: the worker is gone
    reused = _running(f"{HOST}:{os.getpid()}:{this_machine()}-1", heartbeat_age=0)
    assert worker_alive(reused.worker) is False
    assert jobs_reap() == 1
    assert _status(reused) == "failed"


def test_a_live_worker_here_is_not_reaped_however_late_its_heartbeat():
    # on SQLite the job's own transaction keeps the reporter from writing for as long as
    # it lasts: a live pid here is enough
    alive = _running(worker_name(), heartbeat_age=3600)
    assert jobs_reap() == 0
    assert _status(alive) == "running"


def test_another_hosts_worker_is_judged_by_its_heartbeat(settings):
    settings.JOBS_STALE_AFTER = 120
    fresh = _running("elsewhere:42:0123456789ab-5", heartbeat_age=100)
    silent = _running("elsewhere:42:0123456789ab-5", heartbeat_age=140)
    assert jobs_reap() == 1
    assert (_status(fresh), _status(silent)) == ("running", "failed")


@pytest.fixture
def database_queue(settings, monkeypatch):
    """The database queue (no worker: the tests play its part) checked at every reap."""
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    }
    monkeypatch.setattr(services, "QUEUE_CHECK_EVERY", 0)


def _queued(django_capture_on_commit_callbacks, waited: float) -> Job:
    with django_capture_on_commit_callbacks(execute=True):
        job = job_start(
            kind="t",
            label="t",
            func=f"{SAMPLE}.rename",
            user=make_user(username=f"u{Job.objects.count()}"),
            collection_id=make_collection(slug=f"c{Job.objects.count()}").pk,
            params={"name": "x"},
        )
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=waited))
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.task_id
    return job


def test_a_queued_job_its_queue_lost_is_failed(database_queue, django_capture_on_commit_callbacks):
    names = ["waiting", "young", "gone", "ended", "taken", "just_taken", "never_queued"]
    jobs = {name: _queued(django_capture_on_commit_callbacks, waited=600) for name in names}
    jobs["young_gone"] = _queued(django_capture_on_commit_callbacks, waited=0)
    Job.objects.filter(pk=jobs["young"].pk).update(created_at=timezone.now())
    tasks = DBTaskResult.objects
    tasks.filter(id=jobs["gone"].task_id).delete()
    tasks.filter(id=jobs["young_gone"].task_id).delete()
    tasks.filter(id=jobs["ended"].task_id).update(status="FAILED")
    long_ago = timezone.now() - timedelta(seconds=300)
    tasks.filter(id=jobs["taken"].task_id).update(status="RUNNING", started_at=long_ago)
    tasks.filter(id=jobs["just_taken"].task_id).update(status="RUNNING", started_at=timezone.now())
    Job.objects.filter(pk=jobs["never_queued"].pk).update(task_id="")

    assert jobs_reap() == 4
    statuses = {name: _status(job) for name, job in jobs.items()}
    assert statuses == {
        "waiting": "queued",
        "young": "queued",
        "gone": "failed",
        "ended": "failed",
        "taken": "failed",
        "just_taken": "queued",
        "never_queued": "failed",
        "young_gone": "queued",
    }
    gone = Job.objects.get(pk=jobs["gone"].pk)
    assert gone.message.startswith("The queue lost this job before a worker started it")


def test_a_killed_worker_not_yet_collected_by_its_parent_is_dead():
    child = subprocess.Popen(["sleep", "60"])
    try:
        name = f"{HOST}:{child.pid}:{this_machine()}-{process_started(child.pid)}"
        assert worker_alive(name) is True
        os.kill(child.pid, signal.SIGKILL)
        for _ in range(100):  # until the kernel has made it a zombie
            if worker_alive(name) is False:
                break
            time.sleep(0.05)
        assert worker_alive(name) is False
        assert worker_alive(f"{HOST}:{child.pid}") is False
    finally:
        child.kill()
        child.wait()


def test_without_proc_a_worker_here_is_judged_by_its_pid(monkeypatch):
    # macOS: no boot id, no pid namespace, no start time
    from jobs import workers

    monkeypatch.setattr(workers, "this_machine", lambda: "")
    monkeypatch.setattr(workers, "process_started", lambda pid: "")
    assert worker_alive(workers.worker_name()) is True
    assert worker_alive(f"{HOST}:{2**22 + 12345}:-") is False  # above pid_max
    assert worker_alive(f"{HOST}:1:0123456789ab-5") is None  # a Linux worker's name
