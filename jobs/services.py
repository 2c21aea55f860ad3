"""Starting, cancelling and reaping jobs (the writes of the jobs app).

``job_start`` records a job and either queues it for a worker or, for a small input (the
caller's call) or where the task backend is the immediate one, runs it at once in this
process; either way the same job function runs (``jobs.runner.run_job``).  Two jobs that
would conflict on one collection never both start: the second is refused with a message
saying which job holds the collection (``JobRefused``).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks import task_backends
from django_tasks.backends.immediate import ImmediateBackend

from .models import ACTIVE, Conflict, Job, JobLock, JobStatus
from .progress import Snapshot
from .runner import execute, run_job


class JobRefused(Exception):
    """Another job holds the collection; the message says which, and since when."""


def _conflicting(collection_id: int, conflict: str):
    active = Job.objects.filter(collection_id=collection_id, status__in=ACTIVE)
    if conflict == Conflict.EXCLUSIVE:
        return active.exclude(conflict=Conflict.NONE)
    return active.filter(conflict=Conflict.EXCLUSIVE)


def queue_is_immediate() -> bool:
    """True where the task backend runs a task at once in the caller (the test settings,
    or a deployment that chose no worker)."""
    return isinstance(task_backends["default"], ImmediateBackend)


def job_start(
    *,
    kind: str,
    label: str,
    func: str,
    user: AbstractBaseUser | None,
    collection_id: int | None = None,
    conflict: str = Conflict.SHARED,
    params: dict[str, Any] | None = None,
    input: bytes | None = None,
    input_name: str = "",
    inline: bool = False,
    listener: Callable[[Snapshot], None] | None = None,
) -> Job:
    """Record a job and queue it (or run it now: ``inline``, or an immediate backend;
    ``listener`` then hears its progress, as a terminal's bar: ``jobs.terminal``).
    Raises ``JobRefused`` when a conflicting job is active on the collection."""
    with transaction.atomic():
        if collection_id is not None and conflict != Conflict.NONE:
            lock, _ = JobLock.objects.get_or_create(key=f"collection:{collection_id}")
            JobLock.objects.select_for_update().get(pk=lock.pk)
            jobs_reap()
            holder = _conflicting(collection_id, conflict).order_by("created_at").first()
            if holder is not None:
                who = holder.user.get_username() if holder.user else "somebody"
                raise JobRefused(
                    f"{holder.label} (started by {who} at "
                    f"{timezone.localtime(holder.created_at):%H:%M:%S}) is "
                    f"{holder.get_status_display().lower()} on this collection; "
                    f"try again when it has finished."
                    if holder.status == JobStatus.RUNNING
                    else f"{holder.label} (started by {who}) is waiting to run on this "
                    f"collection; try again when it has finished."
                )
        job = Job.objects.create(
            kind=kind,
            label=label[:300],
            func=func,
            user=user if user is not None and user.is_authenticated else None,
            collection_id=collection_id,
            conflict=conflict,
            params=params or {},
            input=input,
            input_name=input_name[:255],
        )
    if inline or queue_is_immediate():
        return run_job(job.pk, listener=listener) or job
    # the worker must find the job's row: queue it once the row is committed
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def _enqueue(job_id: int) -> None:
    result = execute.enqueue(job_id)
    Job.objects.filter(pk=job_id).update(task_id=str(result.id)[:64])


def job_cancel(job: Job) -> Job:
    """Ask the job to stop: a queued job is cancelled at once; a running one stops at its
    next progress report, its transaction rolled back."""
    Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(
        status=JobStatus.CANCELLED,
        finished_at=timezone.now(),
        message="Cancelled before it started: nothing was written.",
        input=None,
    )
    Job.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(cancel_requested=True)
    job.refresh_from_db()
    return job


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def jobs_reap() -> int:
    """Fail the running jobs whose worker is gone: its process is dead (same host), or its
    heartbeat is older than ``JOBS_STALE_AFTER`` seconds (another host).  Their transaction
    died with the worker, so nothing of theirs was written."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.JOBS_STALE_AFTER)
    host = socket.gethostname()
    dead = []
    for pk, worker, heartbeat in Job.objects.filter(status=JobStatus.RUNNING).values_list(
        "pk", "worker", "heartbeat_at"
    ):
        name, _, pid = worker.rpartition(":")
        if name == host and pid.isdigit():
            if not _pid_alive(int(pid)):
                dead.append(pk)
        elif heartbeat is None or heartbeat < stale_before:
            dead.append(pk)
    if not dead:
        return 0
    return Job.objects.filter(Q(pk__in=dead), status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED,
        finished_at=now,
        input=None,
        message="The worker running this job stopped (killed or crashed) before it "
        "finished; its transaction was rolled back, so nothing was written. Start it again.",
    )
