"""The jobs core with real worker processes (``manage.py jobs_worker``), on the database
queue (db_worker) and on the Redis queue (rqworker), against this run's PostgreSQL test
database: a queued job runs with its progress on its row while it runs; a worker killed
with ``kill -9`` mid-job leaves nothing written and its job failed (by a new worker's start
or the job's page), after which it runs again; a cancel mid-way rolls back; a conflicting
job is refused while the first runs; a worker stopped with SIGTERM finishes its job first,
and a second SIGTERM fails it, nothing written.

The worker reads the rows these tests commit (``transaction=True``).  The Redis queue is
this test database's own queue (JOBS_QUEUE_NAME) on ``JOBS_TEST_REDIS_URL``
(redis://127.0.0.1:6379/7), so test runs sharing that Redis database never take each
other's jobs; its keys are deleted afterwards.  Under pytest-xdist these tests run on one
worker, one after another (``xdist_group``): each starts worker processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from annotate.models import Collection
from jobs.models import Conflict, Job, JobStatus
from jobs.services import JobRefused, job_start
from tests.factories import make_collection, make_user
from tests.faults.helpers import ROOT, app_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("workers"),
    pytest.mark.postgres(
        reason="a worker process must share the test database, which on SQLite is in "
        "memory (tests/jobs/test_workers_sqlite.py runs one on a SQLite file)"
    ),
    pytest.mark.django_db(transaction=True),
]

REDIS_URL = os.environ.get("JOBS_TEST_REDIS_URL", "redis://127.0.0.1:6379/7")
SAMPLE = "tests.jobs.sample_jobs"
# a worker starts in about 5 s on a loaded 2-core machine (Django, then the queue)
STARTUP = 90


@dataclass
class Workers:
    """The worker processes of this module, one per queue, started when first needed and
    again after a test killed or stopped one."""

    log_dir: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    task_ids: set[str] = field(default_factory=set)

    def env(self, queue: str) -> dict:
        return app_env(JOBS_QUEUE=queue, JOBS_QUEUE_NAME=queue_name(), REDIS_URL=REDIS_URL)

    def log(self, queue: str) -> Path:
        return self.log_dir / f"{queue}.log"

    def start(self, queue: str) -> subprocess.Popen:
        proc = self.procs.get(queue)
        if proc is None or proc.poll() is not None:
            proc = subprocess.Popen(
                [sys.executable, "manage.py", "jobs_worker", "-v", "1"],
                cwd=ROOT,
                env=self.env(queue),
                stdout=self.log(queue).open("a"),
                stderr=subprocess.STDOUT,
            )
            self.procs[queue] = proc
        return proc

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def queue_name() -> str:
    """This test database's own queue (test_qasynset_ci_gw0, ...)."""
    return f"qasynset-{connection.settings_dict['NAME']}"


def redis_client():
    """The Redis the tests use; skipped where none answers (under CI=true a failure:
    .ci/run starts it)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis does not answer at {REDIS_URL} (CI=true): {e}")
        pytest.skip(f"Redis does not answer at {REDIS_URL}: {e}")
    return client


def delete_redis_keys(client, patterns: list[str]) -> None:
    for pattern in patterns:
        keys = list(client.scan_iter(match=pattern, count=1000))
        if keys:
            client.delete(*keys)


def forget_queue(client, name: str, task_ids: set[str]) -> None:
    """Delete what RQ keeps of queue ``name``: the queue and its registries, its jobs and
    their results, its workers (a stopped one's stay for a minute, a killed one's for
    minutes)."""
    delete_redis_keys(client, [f"rq:*{name}*", *(f"rq:*{task_id}*" for task_id in task_ids)])
    client.srem("rq:queues", f"rq:queue:{name}")
    for key in list(client.scan_iter(match="rq:worker:*", count=1000)):
        if client.type(key) == b"hash" and client.hget(key, "queues") == name.encode():
            client.delete(key)
            client.srem("rq:workers", key)


@pytest.fixture(scope="module")
def workers(tmp_path_factory) -> Iterator[Workers]:
    w = Workers(tmp_path_factory.mktemp("workers"))
    yield w
    w.stop_all()
    if "redis" in w.procs:
        forget_queue(redis_client(), queue_name(), w.task_ids)


@dataclass
class Queue:
    name: str
    workers: Workers

    def worker(self) -> subprocess.Popen:
        return self.workers.start(self.name)

    def log(self) -> str:
        path = self.workers.log(self.name)
        return path.read_text()[-4000:] if path.exists() else ""


@pytest.fixture(params=["database", "redis"])
def queue(request, settings, workers) -> Iterator[Queue]:
    """This test's queue (the database's or Redis's) in this process and its worker."""
    name = queue_name()
    settings.JOBS_QUEUE_NAME = name
    if request.param == "database":
        backend = "django_tasks_db.DatabaseBackend"
    else:
        client = redis_client()
        delete_redis_keys(client, [f"rq:queue:{name}"])  # nothing left from a killed run
        backend = "django_tasks_rq.RQBackend"
        settings.RQ_QUEUES = {
            q: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 3600} for q in ("default", name)
        }
    settings.TASKS = {"default": {"BACKEND": backend, "QUEUES": ["default", name]}}
    q = Queue(request.param, workers)
    yield q
    # a job still running (a test failed) holds locks the flush after the test waits for
    ours = {p.pid for p in workers.procs.values()}
    for job in Job.objects.filter(status=JobStatus.RUNNING):
        pid = int(job.worker.split(":")[1])
        if pid in ours or parent_pid(pid) in ours:
            os.kill(pid, signal.SIGKILL)


def parent_pid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture
def owner():
    return make_user(username="owner")


def start(queue: Queue, owner, collection, **params) -> Job:
    conflict = params.pop("conflict", Conflict.SHARED)
    job = job_start(
        kind="test",
        label="Rename",
        func=f"{SAMPLE}.rename",
        user=owner,
        collection_id=collection.pk,
        conflict=conflict,
        params={"name": "After", **params},
    )
    assert job.status == JobStatus.QUEUED, job.message
    assert job.task_id
    queue.workers.task_ids.add(job.task_id)
    return job


def wait_for(queue: Queue, what: str, check: Callable[[], object], timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}; the worker's log:\n{queue.log()}")


def row(job: Job) -> Job:
    return Job.objects.defer("input").get(pk=job.pk)


def running(queue: Queue, job: Job, done: int = 1) -> Job:
    """The job's row once its worker runs it and has reported ``done`` steps."""
    return wait_for(
        queue,
        f"job {job.pk} to run and report {done} step(s)",
        lambda: (r := row(job)).status == JobStatus.RUNNING and r.done >= done and r,
        timeout=STARTUP,
    )


def ended(queue: Queue, job: Job, timeout: float = 90) -> Job:
    return wait_for(
        queue,
        f"job {job.pk} to end",
        lambda: (r := row(job)).status not in (JobStatus.QUEUED, JobStatus.RUNNING) and r,
        timeout=timeout,
    )


def name_once_unlocked(collection: Collection) -> str:
    """The collection's committed name, once no transaction holds its row (a killed
    worker's transaction ends when the server sees its connection close)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with transaction.atomic():
                return Collection.objects.select_for_update(nowait=True).get(pk=collection.pk).name
        except DatabaseError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def worker_pid(job: Job) -> int:
    return int(row(job).worker.split(":")[1])


def test_a_queued_job_runs_with_its_progress_on_its_row(queue, owner):
    queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=6, sleep=0.7)
    seen: list[tuple[str, int]] = []

    def over() -> Job | None:
        r = row(job)
        seen.append((r.status, r.done))
        return r if r.status not in (JobStatus.QUEUED, JobStatus.RUNNING) else None

    done = wait_for(queue, "the job to end", over, timeout=STARTUP + 30)
    assert done.status == JobStatus.SUCCEEDED, done.message
    assert (done.message, done.done, done.total, done.unit) == ("Renamed to After.", 6, 6, "steps")
    # its progress reached the row while it ran, in order, before its end
    while_running = [d for s, d in seen if s == JobStatus.RUNNING]
    assert any(0 < d < 6 for d in while_running), seen
    assert while_running == sorted(while_running)
    assert name_once_unlocked(collection) == "After"


def test_a_worker_killed_mid_job_writes_nothing_and_its_job_is_failed(queue, owner, client):
    worker = queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=40, sleep=0.5)
    running(queue, job, done=2)  # two renames written in its open transaction
    pid = worker_pid(job)
    if queue.name == "database":
        assert pid == worker.pid  # db_worker runs the job itself
    else:
        assert pid != worker.pid  # RQ runs it in a child, the work horse
    os.kill(pid, signal.SIGKILL)
    assert name_once_unlocked(collection) == "Before"  # rolled back: nothing written
    assert row(job).status == JobStatus.RUNNING  # nobody has noticed yet

    # a worker starting (here one that runs what waits and exits) fails it at once
    subprocess.run(
        [sys.executable, "manage.py", "jobs_worker", "--batch", "-v", "1"],
        cwd=ROOT,
        env=queue.workers.env(queue.name),
        check=True,
        timeout=STARTUP,
        capture_output=True,
    )
    failed = row(job)
    assert failed.status == JobStatus.FAILED
    assert "stopped (killed or crashed)" in failed.message
    assert "nothing was written" in failed.message
    client.force_login(owner)
    page = client.get(reverse("jobs:job-detail", args=[job.pk])).content.decode()
    assert "Failed" in page and "nothing was written" in page

    # and it runs again
    queue.worker()
    again = ended(queue, start(queue, owner, collection, steps=2), timeout=STARTUP + 30)
    assert again.status == JobStatus.SUCCEEDED, again.message
    assert name_once_unlocked(collection) == "After"


def test_the_job_page_fails_a_job_whose_worker_was_killed(queue, owner, client):
    queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=40, sleep=0.5)
    running(queue, job, done=1)
    os.kill(worker_pid(job), signal.SIGKILL)
    assert name_once_unlocked(collection) == "Before"
    client.force_login(owner)
    panel = client.get(reverse("jobs:job-status", args=[job.pk])).content.decode()
    assert "Failed" in panel and "stopped (killed or crashed)" in panel
    assert row(job).status == JobStatus.FAILED


def test_cancel_mid_way_rolls_back(queue, owner, client):
    queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=40, sleep=0.3)
    running(queue, job, done=2)
    client.force_login(owner)
    client.post(reverse("jobs:job-cancel", args=[job.pk]))  # the panel's Cancel button
    cancelled = ended(queue, job, timeout=30)
    assert cancelled.status == JobStatus.CANCELLED
    assert cancelled.message == "Cancelled: nothing was written."
    assert 2 <= cancelled.done < 40
    assert name_once_unlocked(collection) == "Before"


def test_a_conflicting_job_is_refused_while_the_first_runs(queue, owner):
    queue.worker()
    collection = make_collection(name="Before")
    first = start(queue, owner, collection, steps=8, sleep=0.5, conflict=Conflict.EXCLUSIVE)
    running(queue, first, done=1)
    with pytest.raises(JobRefused, match=r"Rename \(started by owner at .*\) is running on"):
        start(queue, owner, collection, name="Second")
    assert ended(queue, first).status == JobStatus.SUCCEEDED
    # once it has ended, the collection is free again
    second = ended(queue, start(queue, owner, collection, name="Second", steps=1))
    assert second.status == JobStatus.SUCCEEDED
    assert name_once_unlocked(collection) == "Second"


def test_sigterm_lets_the_running_job_finish(queue, owner):
    worker = queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=6, sleep=0.5)
    running(queue, job, done=1)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(60) == 0
    finished = row(job)
    assert finished.status == JobStatus.SUCCEEDED, finished.message
    assert name_once_unlocked(collection) == "After"


def test_a_second_sigterm_fails_the_running_job_nothing_written(queue, owner, client):
    worker = queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=40, sleep=0.5)
    running(queue, job, done=1)
    worker.send_signal(signal.SIGTERM)
    time.sleep(1.5)  # RQ takes a second signal within a second for the same one
    worker.send_signal(signal.SIGTERM)
    worker.wait(60)
    assert name_once_unlocked(collection) == "Before"
    client.force_login(owner)
    client.get(reverse("jobs:job-status", args=[job.pk]))  # the page reaps
    stopped = row(job)
    assert stopped.status == JobStatus.FAILED
    assert "nothing was written" in stopped.message
    if queue.name == "database":
        # db_worker raises SystemExit in the job: the job says so itself
        assert stopped.message.startswith("The process running this job was stopped")
    else:
        # RQ kills its work horse (SIGKILL): the reaper tells
        assert "stopped (killed or crashed)" in stopped.message


def test_a_workers_database_timeouts_are_a_jobs(queue, owner):
    queue.worker()
    job = job_start(kind="test", label="Timeouts", func=f"{SAMPLE}.database_timeouts", user=owner)
    queue.workers.task_ids.add(job.task_id)
    done = ended(queue, job, timeout=STARTUP + 30)
    assert done.status == JobStatus.SUCCEEDED, done.message
    # JOBS_DB_STATEMENT_TIMEOUT_MS and JOBS_DB_LOCK_TIMEOUT_MS, not the web's 20 s and 5 s
    assert (done.result["statement_timeout"], done.result["lock_timeout"]) == ("1h", "1min")


@pytest.mark.parametrize("queue", ["redis"], indirect=True)  # the database queue has none
def test_rqs_timeout_fails_the_job_nothing_written(queue, owner, settings):
    # the queue that queues it gives the job its timeout (JOBS_TIMEOUT)
    for config in settings.RQ_QUEUES.values():
        config["DEFAULT_TIMEOUT"] = 3
    queue.worker()
    collection = make_collection(name="Before")
    job = start(queue, owner, collection, steps=40, sleep=0.5)
    stopped = ended(queue, job, timeout=STARTUP + 30)
    assert stopped.status == JobStatus.FAILED
    assert stopped.message.startswith("The job ran longer than the queue allows and was stopped")
    assert "nothing was written" in stopped.message
    assert name_once_unlocked(collection) == "Before"
