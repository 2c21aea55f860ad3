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

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, close_old_connections, connection
from django.db.models.functions import Now
from django.utils import timezone, translation
from django.utils.module_loading import import_string
from django.utils.translation import gettext, gettext_lazy
from django_tasks import task, task_backends
from django_tasks.backends.immediate import ImmediateBackend

from .models import Job, JobOutput, JobStatus
from .progress import JobCancelled, Progress, Reporter, Snapshot
from .workers import worker_name

logger = logging.getLogger(__name__)


class JobFailed(Exception):
    """The job's input (or the state it found) is wrong: nothing was written, and these
    errors say why, each with its file and line where it has one."""

    def __init__(self, message: str, errors: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.errors = _jsonable(
            [
                {"file": e.get("file"), "line": e.get("line"), "message": str(e.get("message", ""))}
                for e in errors
            ]
        )


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


@task()
def execute(job_id: int) -> str:
    """The task a worker runs: the job, with a reporter thread writing its progress."""
    close_old_connections()
    try:
        job = run_job(job_id, in_worker=True)
    finally:
        close_old_connections()
    return job.status if job else "missing"


def queue_is_immediate() -> bool:
    """True where the task backend runs a task at once in the caller (the test settings,
    or a deployment that chose no worker)."""
    return isinstance(task_backends["default"], ImmediateBackend)


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
        # the database's clock, as the reporter's heartbeats and the reaper's check
        heartbeat_at=Now(),
        phase_started_at=now,
        worker=worker_name(),
    )
    if not claimed:
        return Job.objects.filter(pk=job_id).first()
    job = Job.objects.select_related("user", "collection").get(pk=job_id)
    progress = Progress(listener)
    # a job run inline (a command's, or a request's) beats and reports too, so that no
    # web server elsewhere takes it for dead, and its page can follow and cancel it; not
    # under the immediate backend (the tests), nor inside a caller's transaction (its row's
    # claim is not committed: no other connection could see it or write it)
    beats = in_worker or not (queue_is_immediate() or connection.in_atomic_block)
    reporter = Reporter(job.pk, progress) if beats else None
    if reporter:
        reporter.start()
    try:
        try:
            # its messages in the language of the person who started it
            with translation.override(job.language or None):
                outcome = _call(job, progress)
        except BaseException:
            # the worker is being stopped (SystemExit from a second SIGTERM or Ctrl+C): the
            # job's transaction was rolled back on the way out; say so before leaving
            with translation.override(job.language or None):
                stopped = str(STOPPED)
            _record_end(job.pk, progress, {"status": JobStatus.FAILED, "message": stopped}, 2)
            raise
        # written while the reporter still beats: the row says "running" no longer than
        # the database takes to answer
        _record_end(job.pk, progress, outcome)
    finally:
        if reporter:
            reporter.stop()
    job.refresh_from_db()
    return job


STOPPED = gettext_lazy(
    "The process running this job was stopped (its worker shut down) before the job "
    "finished; its transaction was rolled back, so nothing was written. Start it again."
)


def _call(job: Job, progress: Progress) -> dict[str, Any]:
    """Call the job's function; return how it ended (the fields of its row to write)."""
    try:
        func = import_string(job.func)
    except ImportError:
        logger.exception("job %s: its function %s does not import", job.pk, job.func)
        return {
            "status": JobStatus.FAILED,
            "message": gettext(
                "This version of the app has no job function %(func)s (it was renamed or "
                "removed since the job was queued); nothing was written. Start it again."
            )
            % {"func": repr(job.func)},
        }
    try:
        result = func(JobContext(job, progress))
    except JobCancelled:
        return {
            "status": JobStatus.CANCELLED,
            "message": gettext("Cancelled: nothing was written."),
        }
    except JobFailed as e:
        return {"status": JobStatus.FAILED, "message": e.message, "errors": e.errors}
    except Exception as e:
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        if type(e).__name__ == "JobTimeoutException":  # RQ's, at the queue's JOBS_TIMEOUT
            return {
                "status": JobStatus.FAILED,
                "message": gettext(
                    "The job ran longer than the queue allows and was stopped (%(reason)s); "
                    "nothing was written."
                )
                % {"reason": e},
            }
        return {
            "status": JobStatus.FAILED,
            "message": gettext(
                "The job stopped on an internal error; nothing was written. "
                "The error is in the worker's log."
            ),
        }
    # the function returned: its writes are committed, whatever it returned
    if not isinstance(result, Mapping):
        result = {"message": str(result)} if result else {}
    result = _jsonable(dict(result))
    return {
        "status": JobStatus.SUCCEEDED,
        "message": str(result.get("message", gettext("Done."))),
        "result": result,
    }


def _jsonable(value: Any) -> Any:
    """``value`` as a JSON column can store it (numpy numbers as numbers; dates, decimals
    and anything else as text): a result or an error that cannot be stored must not leave
    an ended job looking unfinished."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    try:
        return DjangoJSONEncoder().default(value)
    except TypeError:
        return str(value)


# how often, and how long, the final write of a job's row is tried (the database may be
# restarting: the job's writes are committed or rolled back, and its row must say which)
END_TRIES = 8


def _record_end(
    job_id: int, progress: Progress, outcome: dict[str, Any], tries: int = END_TRIES
) -> None:
    """Write how the job ended on its row, unconditionally: a job the reaper failed
    meanwhile (its heartbeat came late) did run, and how it really ended wins."""
    snap = progress.peek()
    fields = {
        "phase": snap.phase,
        "done": snap.total
        if outcome["status"] == JobStatus.SUCCEEDED and snap.total
        else snap.done,
        "total": snap.total,
        "unit": snap.unit,
        "finished_at": timezone.now(),
        "input": None,
        **outcome,
    }
    for attempt in range(tries):
        # inside a caller's transaction (an inline job run from one) the connection is
        # the caller's to keep, and so is an error
        ours = not connection.in_atomic_block
        try:
            if ours:
                # a connection the job's failure broke is replaced, not reused
                connection.close_if_unusable_or_obsolete()
            Job.objects.filter(pk=job_id).update(**fields)
            return
        except DatabaseError:
            if not ours:
                raise
            logger.warning("job %s: its end not written (try %d)", job_id, attempt + 1)
            connection.close()
            if attempt + 1 < tries:
                time.sleep(min(2**attempt, 15))
    logger.error("job %s ended %s but its row could not say so", job_id, outcome["status"])
