"""The database queue with a real worker on a SQLite file, as ``make demo`` runs it: a job
runs, its progress reaching the row while it reads (before its write transaction opens:
SQLite has one writer at a time); a worker killed with ``kill -9`` inside the job's write
transaction leaves nothing written, and the next worker's start fails the job.

The suite's SQLite test database is in memory, where no other process can reach it: these
tests make a database file of their own (``manage.py migrate`` in a subprocess), start jobs
in a subprocess too, and read the rows with Python's sqlite3."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("workers")]

START = """
import json, sys
from django.contrib.auth import get_user_model
from annotate.models import Collection
from jobs.services import job_start
owner, _ = get_user_model().objects.get_or_create(username="owner")
collection, _ = Collection.objects.get_or_create(slug="jobs", defaults={"name": "Before"})
Collection.objects.filter(pk=collection.pk).update(name="Before")
job = job_start(kind="test", label="Rename", func="tests.jobs.sample_jobs.read_then_rename",
                user=owner, collection_id=collection.pk, params=json.loads(sys.argv[-1]))
print(job.pk, job.status)
"""


@dataclass
class Site:
    path: Path
    env: dict

    def manage(self, *args: str, timeout: float = 180) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start_job(self, **params) -> int:
        """Start a job (``read_then_rename``) as a page would; its id."""
        out = subprocess.run(
            [sys.executable, "-c", _SHELL, json.dumps({"name": "After", **params})],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        pk, status = out.stdout.split()
        assert status == "queued"
        return int(pk)

    def query(self, sql: str, *params):
        with sqlite3.connect(self.path, timeout=20) as db:
            return db.execute(sql, params).fetchone()

    def job(self, pk: int) -> dict:
        status, phase, done, message = self.query(
            "SELECT status, phase, done, message FROM jobs_job WHERE id = ?", pk
        )
        return {"status": status, "phase": phase, "done": done, "message": message}

    def name(self) -> str:
        return self.query("SELECT name FROM annotate_collection WHERE slug = 'jobs'")[0]

    def worker(self, log: Path) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "manage.py", "jobs_worker", "-v", "1"],
            cwd=ROOT,
            env=self.env,
            stdout=log.open("a"),
            stderr=subprocess.STDOUT,
        )


# a script of its own (``manage.py shell -c`` takes no arguments for the job's parameters)
_SHELL = (
    "import django, os, sys\n"
    "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\n"
    "django.setup()\n" + START
)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite worker tests run in make test (this run uses PostgreSQL)")
    path = tmp_path_factory.mktemp("sqlite-worker") / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "JOBS_"))}
    env.update(
        DATABASE_URL=f"sqlite:///{path}",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        JOBS_QUEUE="database",
        PYTHONPATH=str(ROOT),
    )
    s = Site(path, env)
    s.manage("migrate", "--noinput", "-v0")
    yield s


def wait_for(check, what: str, log: Path, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}; the worker's log:\n{log.read_text()[-4000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_job_runs_with_its_reading_progress_on_its_row(site, tmp_path):
    log = tmp_path / "worker.log"
    pk = site.start_job(read_steps=6, read_sleep=0.7, steps=2)
    worker = site.worker(log)
    try:
        seen = []

        def over():
            job = site.job(pk)
            seen.append((job["status"], job["phase"], job["done"]))
            return job["status"] not in ("queued", "running") and (job["status"], job["message"])

        assert wait_for(over, "the job to end", log) == ("succeeded", "Renamed to After.")
    finally:
        stop(worker)
    reading = [done for status, phase, done in seen if status == "running" and phase == "Reading"]
    assert any(0 < d < 6 for d in reading), seen
    assert reading == sorted(reading)
    assert site.name() == "After"


def _writing(site: Site) -> bool:
    """Whether a write transaction is open on the database (SQLite's one writer)."""
    db = sqlite3.connect(site.path, timeout=0)
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return True
    finally:
        db.close()
    return False


def test_a_worker_killed_inside_the_write_leaves_nothing_and_the_next_start_fails_it(
    site, tmp_path
):
    log = tmp_path / "worker.log"
    pk = site.start_job(read_steps=1, steps=40, sleep=0.5)
    worker = site.worker(log)
    try:
        wait_for(lambda: site.job(pk)["status"] == "running", "the job to start", log)
        wait_for(lambda: _writing(site), "the job's write transaction", log)
        time.sleep(1.5)  # a few renames written in it
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
    finally:
        stop(worker)
    assert site.name() == "Before"  # its transaction never committed
    assert site.job(pk)["status"] == "running"  # nobody has noticed yet
    site.manage("jobs_worker", "--batch", "-v", "0")  # a worker starts: it fails the job
    job = site.job(pk)
    assert job["status"] == "failed"
    assert "stopped (killed or crashed)" in job["message"]
    assert "nothing was written" in job["message"]
    assert site.name() == "Before"
