"""Running a job: the one task of the task framework (``execute``), which claims the job's
row, calls the job's function with a ``JobContext``, and records how it ended.  The same
``run_job`` runs a small job inline (in the request or a management command): one code
path whether or not a worker runs it.

A job function does its writes in one transaction (or in steps each atomic), reports with
``ctx.progress`` and ends by returning its result (a JSON-able dict: ``message``, and
``url`` for the page to open next) or by raising ``JobFailed`` with the errors a person
needs (file, line, message: what the inline path shows).  ``JobCancelled`` (raised by
``ctx.progress`` once cancelled) and any other exception roll its transaction back.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import close_old_connections
from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks import task

from .models import Job, JobOutput, JobStatus
from .progress import JobCancelled, Progress, Reporter, Snapshot

logger = logging.getLogger(__name__)


class JobFailed(Exception):
    """The job's input (or the state it found) is wrong: nothing was written, and these
    errors say why, each with its file and line where it has one."""

    def __init__(self, message: str, errors: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.errors = [
            {"file": e.get("file"), "line": e.get("line"), "message": str(e.get("message", ""))}
            for e in errors
        ]


@dataclass
class JobContext:
    """What a job function gets: its row (params, input, user, collection) and its
    progress reporter."""

    job: Job
    progress: Progress

    @property
    def params(self) -> dict[str, Any]:
        return self.job.params

    @property
    def input(self) -> bytes:
        return bytes(self.job.input or b"")

    def save_output(self, name: str, data: bytes, content_type: str) -> JobOutput:
        """Keep a file the job made for its owner to download from the job's page (the
        result's ``url`` may point at ``jobs:job-output``)."""
        return JobOutput.objects.create(
            job=self.job, name=name, content_type=content_type, size=len(data), data=data
        )


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@task()
def execute(job_id: int) -> str:
    """The task a worker runs: the job, with a reporter thread writing its progress."""
    close_old_connections()
    try:
        job = run_job(job_id, in_worker=True)
    finally:
        close_old_connections()
    return job.status if job else "missing"


def run_job(
    job_id: int,
    *,
    in_worker: bool = False,
    listener: Callable[[Snapshot], None] | None = None,
) -> Job | None:
    """Run the job ``job_id`` if it is still queued; return its row as it ended (None if it
    was not there to run: cancelled while queued, or run already)."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        phase_started_at=now,
        worker=worker_name(),
    )
    if not claimed:
        return Job.objects.filter(pk=job_id).first()
    job = Job.objects.select_related("user", "collection").get(pk=job_id)
    progress = Progress(listener)
    reporter = Reporter(job.pk, progress) if in_worker else None
    if reporter:
        reporter.start()
    outcome: dict[str, Any]
    try:
        func = import_string(job.func)
        result = func(JobContext(job, progress))
    except JobCancelled:
        outcome = {"status": JobStatus.CANCELLED, "message": "Cancelled: nothing was written."}
    except JobFailed as e:
        outcome = {"status": JobStatus.FAILED, "message": e.message, "errors": e.errors}
    except Exception:
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        outcome = {
            "status": JobStatus.FAILED,
            "message": "The job stopped on an internal error; nothing was written. "
            "The error is in the worker's log.",
        }
    else:
        result = dict(result or {})
        outcome = {
            "status": JobStatus.SUCCEEDED,
            "message": str(result.get("message", "Done.")),
            "result": result,
        }
    finally:
        if reporter:
            reporter.stop()
    snap = progress.peek()
    fields = {
        "phase": snap.phase,
        "done": snap.done,
        "total": snap.total,
        "unit": snap.unit,
        "finished_at": timezone.now(),
        "input": None,
        **outcome,
    }
    if outcome["status"] == JobStatus.SUCCEEDED and snap.total:
        fields["done"] = snap.total
    # unconditional: a job the reaper failed meanwhile (its heartbeat came late) did run,
    # and how it really ended wins
    Job.objects.filter(pk=job.pk).update(**fields)
    job.refresh_from_db()
    return job
