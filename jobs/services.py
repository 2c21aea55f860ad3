"""Starting, cancelling and reaping jobs (the writes of the jobs app).

``job_start`` records a job and either queues it for a worker or, for a small input (the
caller's call) or where the task backend is the immediate one, runs it at once in this
process; either way the same job function runs (``jobs.runner.run_job``).  Two jobs that
would conflict on one collection never both start: the second is refused with a message
saying which job holds the collection (``JobRefused``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import BooleanField, Case, Q, When
from django.db.models.functions import Now
from django.utils import timezone, translation
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy
from django_tasks import task_backends
from django_tasks.base import TaskResultStatus
from django_tasks.exceptions import TaskResultDoesNotExist

from .models import ACTIVE, Conflict, Job, JobLock, JobStatus
from .progress import Snapshot
from .runner import execute, queue_is_immediate, run_job
from .workers import worker_alive

logger = logging.getLogger(__name__)


class JobRefused(Exception):
    """Another job holds the collection; the message says which, and since when."""


def _conflicting(collection_id: int, conflict: str):
    active = Job.objects.filter(collection_id=collection_id, status__in=ACTIVE)
    if conflict == Conflict.EXCLUSIVE:
        return active.exclude(conflict=Conflict.NONE)
    return active.filter(conflict=Conflict.EXCLUSIVE)


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
    listed: bool = True,
    priority: int = 0,
) -> Job:
    """Record a job and queue it (or run it now: ``inline``, or an immediate backend;
    ``listener`` then hears its progress, as a command's progress bar does; ``listed``
    False: the app started it on its own, it is not in the user's list of jobs; a higher
    ``priority`` is taken first by the workers, where the queue orders by it: a page
    waits for it).  Raises ``JobRefused`` when a conflicting job is active on the
    collection."""
    with transaction.atomic():
        if collection_id is not None and conflict != Conflict.NONE:
            lock, _ = JobLock.objects.get_or_create(key=f"collection:{collection_id}")
            JobLock.objects.select_for_update().get(pk=lock.pk)
            # not the queue: a Redis that does not answer must not hold the lock
            jobs_reap(queue=False)
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
            listed=listed,
            language=translation.get_language() or "",
        )
    if inline or queue_is_immediate():
        return run_job(job.pk, listener=listener) or job
    # the worker must find the job's row: queue it once the row is committed (at once,
    # unless the caller is inside a transaction of its own)
    transaction.on_commit(lambda: _enqueue(job.pk, priority))
    if not transaction.get_connection().in_atomic_block:
        job.refresh_from_db(fields=["status", "message", "finished_at", "task_id"])
    return job


def _enqueue(job_id: int, priority: int = 0) -> None:
    """Queue the job for a worker (ahead of the others with a ``priority``, where the
    queue orders by it: the database queue does, RQ does not); a queue that does not
    answer (Redis down) fails the job with a message instead of leaving it waiting for
    ever."""
    try:
        task = execute.using(queue_name=settings.JOBS_QUEUE_NAME)
        if priority and task_backends["default"].supports_priority:
            task = task.using(priority=priority)
        result = task.enqueue(job_id)
    except Exception:
        logger.exception("job %s could not be queued", job_id)
        _end_each([job_id], JobStatus.QUEUED, UNQUEUED)
        return
    Job.objects.filter(pk=job_id).update(task_id=str(result.id)[:64])


def job_cancel(job: Job) -> Job:
    """Ask the job to stop: a queued job is cancelled at once; a running one stops at its
    next progress report, its transaction rolled back."""
    _end_each([job.pk], JobStatus.QUEUED, CANCELLED_QUEUED, status=JobStatus.CANCELLED)
    Job.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(cancel_requested=True)
    job.refresh_from_db()
    return job


def jobs_reap(*, queue: bool = True) -> int:
    """Fail the jobs that will never end by themselves; return how many.

    A running job whose worker is gone: its process is dead (where its pid tells: the same
    host, container and boot, see ``jobs.workers``), or its heartbeat is older than
    ``JOBS_STALE_AFTER`` seconds (anywhere else; the database's clock on both sides).  Its
    transaction died with the worker, so nothing of it was written.  And, unless ``queue``
    is false, a queued job its queue will never run (``_lost_in_queue``)."""
    stale_before = Now() - timedelta(seconds=settings.JOBS_STALE_AFTER)
    running = (
        Job.objects.filter(status=JobStatus.RUNNING)
        .annotate(
            silent=Case(
                When(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale_before), then=True),
                default=False,
                output_field=BooleanField(),
            )
        )
        .values_list("pk", "worker", "silent")
    )
    dead = []
    for pk, worker, silent in running:
        alive = worker_alive(worker)
        if alive is False or (alive is None and silent):
            dead.append(pk)
    failed = _end_each(dead, JobStatus.RUNNING, WORKER_DIED) if dead else 0
    lost = _lost_in_queue() if queue else []
    if lost:
        failed += _end_each(lost, JobStatus.QUEUED, LOST_IN_QUEUE)
    return failed


UNQUEUED = gettext_lazy(
    "The job could not be queued (the queue did not answer); nothing was written. Try "
    "again in a moment; if it keeps failing, tell the site's administrators (is the "
    "worker's queue, Redis, running?)."
)
CANCELLED_QUEUED = gettext_lazy("Cancelled before it started: nothing was written.")
WORKER_DIED = gettext_lazy(
    "The worker running this job stopped (killed or crashed) before it finished; its "
    "transaction was rolled back, so nothing was written. Start it again."
)
LOST_IN_QUEUE = gettext_lazy(
    "The queue lost this job before a worker started it (the worker that took it stopped, "
    "or the queue was emptied); nothing was written. Start it again."
)


def _end_each(ids: list[int], was: str, message: Promise, *, status: str = JobStatus.FAILED) -> int:
    """End the jobs ``ids`` still ``was`` with ``status`` and ``message``, written in each
    job's language (its starter's); return how many ended."""
    ended = 0
    now = timezone.now()
    for language in set(Job.objects.filter(pk__in=ids).values_list("language", flat=True)):
        with translation.override(language or None):
            text = str(message)
        ended += Job.objects.filter(pk__in=ids, status=was, language=language).update(
            status=status, finished_at=now, input=None, message=text
        )
    return ended


# a queued job is looked for in its queue once it has waited QUEUE_CHECK_AFTER seconds, at
# most every QUEUE_CHECK_EVERY seconds per process (the job pages reap as they poll)
QUEUE_CHECK_AFTER = 60
QUEUE_CHECK_EVERY = 15
QUEUE_CHECK_MAX = 20
_queue_checked_at = -float("inf")


def _lost_in_queue() -> list[int]:
    """The queued jobs their queue will never run: never queued (the process that started
    it died first), gone from the queue (Redis emptied, or restarted without its data), or
    taken by a worker that died before it started the job (its task ended, or has run for
    ``QUEUE_CHECK_AFTER`` seconds, while the job still waits)."""
    global _queue_checked_at
    if queue_is_immediate() or time.monotonic() - _queue_checked_at < QUEUE_CHECK_EVERY:
        return []
    _queue_checked_at = time.monotonic()
    backend = task_backends["default"]
    if not backend.supports_get_result:
        return []
    before = timezone.now() - timedelta(seconds=QUEUE_CHECK_AFTER)
    waiting = (
        Job.objects.filter(status=JobStatus.QUEUED, created_at__lt=before)
        .order_by("created_at")
        .values_list("pk", "task_id")[:QUEUE_CHECK_MAX]
    )
    lost = []
    for pk, task_id in waiting:
        if not task_id:
            lost.append(pk)
            continue
        try:
            task = backend.get_result(task_id)
        except TaskResultDoesNotExist:
            lost.append(pk)
            continue
        except Exception:
            # the queue does not answer: it cannot tell now
            logger.warning("jobs: the queue did not answer about task %s", task_id, exc_info=True)
            break
        ended = task.status in (TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED)
        taken_long_ago = task.status == TaskResultStatus.RUNNING and (
            task.started_at is None or task.started_at < before
        )
        if ended or taken_long_ago:
            lost.append(pk)
    return lost
