"""In Chromium, a run too large for the request is uploaded: the page shows its job in
place of the form, waiting for a worker; a real worker (``manage.py jobs_worker`` on the
database queue, sharing the test's PostgreSQL database) picks it up, the bar moves through
reading, storing and scoring, ends at "Done", and its link opens the run.

On SQLite the test database lives in this process's memory, which no other process can
open: the worker is then a thread of this process running each queued job as the worker's
task does (``jobs.runner.run_job`` with its reporter thread)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest
from django.db import close_old_connections, connection

from annotate.models import Question
from evaluation import run_jobs
from evaluation.models import Run
from jobs.models import Job, JobStatus
from jobs.runner import run_job
from tests.factories import add_member, make_collection, make_user
from tests.faults.helpers import ROOT, app_env

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_QUESTIONS, L = 20_000, 5  # 100,000 answer lines, 2.6 MB: far over the inline limit
DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
# the panel as the page shows it now (it is replaced every second by its poll)
READ_PANEL = """() => {
  const p = document.querySelector('.job-panel');
  if (!p) return null;
  const bar = p.querySelector('progress');
  return {
    status: p.dataset.status,
    phase: (p.querySelector('.job-phase') || {}).textContent || '',
    counts: (p.querySelector('.job-counts') || {}).textContent || '',
    value: bar && bar.hasAttribute('value') ? Number(bar.getAttribute('value')) : null,
    max: bar ? Number(bar.getAttribute('max')) : null,
  };
}"""


class ThreadWorker(threading.Thread):
    """The worker on SQLite: runs each queued job in turn, as the worker's task does."""

    def __init__(self) -> None:
        super().__init__(name="test-jobs-worker", daemon=True)
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            while not self.halt.wait(0.5):
                for pk in Job.objects.filter(status=JobStatus.QUEUED).values_list("pk", flat=True):
                    run_job(pk, in_worker=True)
        finally:
            close_old_connections()
            connection.close()

    def stop(self) -> None:
        self.halt.set()
        self.join(60)


def start_worker(log_path):
    if connection.vendor == "postgresql":
        log = open(log_path, "w")  # closed with the process (stop_worker)
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "jobs_worker", "-v2"],
            cwd=ROOT,
            env=app_env(JOBS_QUEUE="database"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        return proc, log
    worker = ThreadWorker()
    worker.start()
    return worker, None


def stop_worker(worker, log) -> None:
    if isinstance(worker, subprocess.Popen):
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(10)
        log.close()
    else:
        worker.stop()


def test_a_large_run_upload_runs_in_a_worker_and_its_bar_finishes(
    page, live_server, settings, tmp_path, artifacts
):
    from playwright.sync_api import expect

    settings.TASKS = DATABASE_QUEUE  # the page queues what it does not run itself
    c = make_collection(
        slug="big", name="Big campaign", open_for_submissions=True, max_output_size=L
    )
    Question.objects.bulk_create(
        Question(collection=c, qid=f"q{i:05d}", text=f"Question {i}?") for i in range(N_QUESTIONS)
    )
    participant = make_user(username="runner", password="runner-pw-123")
    add_member(collection=c, user=participant, role="participant")
    run_file = tmp_path / "big.tsv"
    run_file.write_text(
        "".join(
            f"q{i:05d}\t{r}\tanswer {i} {r}\n" for i in range(N_QUESTIONS) for r in range(1, L + 1)
        )
    )
    assert not run_jobs.small_run_file(run_file.read_bytes())

    login(page, live_server, "runner", "runner-pw-123")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/collections/big/runs/upload/")
    page.fill("input[name=name]", "big")
    page.set_input_files("input[name=file]", str(run_file))
    page.click("#upload-form button[type=submit]")

    # the form gives way to the job's panel: queued, no worker yet
    panel = page.locator(".job-panel")
    expect(panel).to_have_attribute("data-status", "queued", timeout=60_000)
    expect(panel.locator(".job-title")).to_have_text("Upload of run 'big'")
    expect(page.locator("#upload-form")).to_have_count(0)
    expect(panel.get_by_role("button", name="Cancel")).to_be_visible()
    job = Job.objects.get(kind="run-upload")
    assert job.status == JobStatus.QUEUED and not Run.objects.filter(name="big").exists()
    page.screenshot(path=str(artifacts / "run-upload-job-queued.png"), full_page=True)

    worker, log = start_worker(tmp_path / "worker.log")
    seen = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            state = page.evaluate(READ_PANEL)
            if state and (not seen or state != seen[-1]):
                seen.append(state)
                if state["status"] == "running" and len(seen) < 40:
                    page.screenshot(path=str(artifacts / "run-upload-job-running.png"))
            if state and state["status"] not in ("queued", "running"):
                break
            time.sleep(0.2)
    finally:
        stop_worker(worker, log)
    worker_log = (tmp_path / "worker.log").read_text() if log else ""
    (artifacts / "run-upload-job-states.json").write_text(json.dumps(seen, indent=1))
    assert seen and seen[-1]["status"] == "succeeded", (seen[-3:], worker_log[-2000:])

    # the bar moved: the job was seen running, its phases in order, counts never going back
    # within a phase, and it ended full
    running = [s for s in seen if s["status"] == "running"]
    assert len({(s["phase"], s["value"]) for s in running}) >= 2, seen
    phases = list(dict.fromkeys(s["phase"] for s in running if s["phase"]))
    order = ["Reading the file", "Storing the answers", "Scoring the run"]
    assert phases and phases == [p for p in order if p in phases], phases
    for phase in phases:
        values = [s["value"] for s in running if s["phase"] == phase and s["value"] is not None]
        assert values == sorted(values), (phase, values)
    last = seen[-1]
    assert last["value"] == last["max"] and "Scoring the run" in last["phase"]
    expect(panel.locator(".job-message")).to_have_text(
        f"Run 'big' uploaded: {N_QUESTIONS * L} answers."
    )
    page.screenshot(path=str(artifacts / "run-upload-job-done.png"), full_page=True)

    # (the run's page scores 100,000 answers: slow on a loaded machine)
    panel.get_by_role("link", name="Open the run").click(no_wait_after=True)
    page.wait_for_url(re.compile(r".*/collections/big/runs/\d+/$"), timeout=180_000)
    expect(page.locator("h1")).to_have_text("Run big")
    run = Run.objects.get(name="big")
    assert page.url.endswith(f"/collections/big/runs/{run.pk}/")
    assert run.answers.count() == N_QUESTIONS * L
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result["run_id"] == run.pk
    if connection.vendor == "postgresql":
        # a real worker process ran it, not this one
        assert not job.worker.endswith(f":{os.getpid()}"), job.worker
