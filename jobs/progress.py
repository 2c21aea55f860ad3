"""How a job tells people how far it has come, and learns that they cancelled it.

A job function calls ``progress(done, total, unit)`` as it goes (and ``progress.phase(...)``
between its steps).  The call only records the numbers in memory and raises ``JobCancelled``
once somebody asked to cancel; a reporter thread of the worker writes them to the job's row
about once a second through its own database connection, so the figures are visible while
the job's own transaction is still open, and reads the cancel flag back.  The same thread
is the job's heartbeat: a job whose heartbeat stops (a worker killed with ``kill -9`` on
another machine) is failed by ``jobs.services.jobs_reap``.  A job run inline (in a request
or a command) has its reporter thread too, but under the immediate backend (the tests); a
terminal progress bar may listen as well (``jobs.terminal``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import DatabaseError, connection
from django.db.models.functions import Now
from django.utils import timezone

from .models import Job, JobStatus

logger = logging.getLogger(__name__)

# how often the reporter writes progress and the heartbeat (seconds)
REPORT_EVERY = 1.0


class JobCancelled(Exception):
    """Somebody cancelled the job: its transaction rolls back, nothing is written."""


@dataclass
class Snapshot:
    phase: str = ""
    done: int = 0
    total: int | None = None
    unit: str = ""


class Progress:
    """The numbers a job reports, and its cancel flag (thread-safe)."""

    def __init__(self, listener: Callable[[Snapshot], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._snapshot = Snapshot()
        self._changed = True
        self._phase_started = time.monotonic()
        self.cancelled = threading.Event()
        self._listener = listener

    def __call__(self, done: int, total: int | None = None, unit: str | None = None) -> None:
        """Record ``done`` of ``total`` (None: unknown) ``unit``s; raise ``JobCancelled`` if
        the job was cancelled."""
        with self._lock:
            s = self._snapshot
            s.done = int(done)
            if total is not None:
                s.total = int(total)
            if unit is not None:
                s.unit = unit
            self._changed = True
            snap = Snapshot(s.phase, s.done, s.total, s.unit)
        if self._listener:
            self._listener(snap)
        self.check()

    def phase(self, label: str, total: int | None = None, unit: str = "") -> None:
        """Start a new step (``Reading the file``, ``Storing answers``): counts restart."""
        with self._lock:
            self._snapshot = Snapshot(label, 0, total, unit)
            self._changed = True
            self._phase_started = time.monotonic()
            snap = Snapshot(label, 0, total, unit)
        if self._listener:
            self._listener(snap)
        self.check()

    def check(self) -> None:
        if self.cancelled.is_set():
            raise JobCancelled()

    def take(self) -> Snapshot | None:
        """The numbers if they changed since the last take (the reporter's read)."""
        with self._lock:
            if not self._changed:
                return None
            self._changed = False
            s = self._snapshot
            return Snapshot(s.phase, s.done, s.total, s.unit)

    def touch(self) -> None:
        """Mark the numbers changed (the reporter could not write them: write them again)."""
        with self._lock:
            self._changed = True

    def peek(self) -> Snapshot:
        with self._lock:
            s = self._snapshot
            return Snapshot(s.phase, s.done, s.total, s.unit)


class Reporter(threading.Thread):
    """The worker's thread that writes a running job's progress and heartbeat to its row
    and reads its cancel flag (its own connection: Django's connections are per thread)."""

    def __init__(self, job_id: int, progress: Progress, every: float = REPORT_EVERY) -> None:
        super().__init__(name=f"job-{job_id}-reporter", daemon=True)
        self.job_id = job_id
        self.progress = progress
        self.every = every
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.wait(self.every):
                try:
                    self._report()
                except DatabaseError:
                    self.progress.touch()
                    # SQLite holds one writer at a time: the job's own transaction may hold
                    # it; or the database restarted: the next tick tries again, on a new
                    # connection
                    logger.debug("job %s: progress not written this time", self.job_id)
                    connection.close()
        finally:
            connection.close()

    _last_phase: str | None = None

    def _report(self) -> None:
        # the cancel flag first: a read, which never waits for the job's own transaction
        # (SQLite's one writer included)
        if Job.objects.filter(pk=self.job_id, cancel_requested=True).exists():
            self.progress.cancelled.set()
        now = timezone.now()
        # the database's clock: the reaper compares it with its own, whatever the clocks
        # of the machines running workers and web servers say
        fields: dict[str, object] = {"heartbeat_at": Now()}
        snap = self.progress.take()
        if snap is not None:
            fields.update(phase=snap.phase, done=snap.done, total=snap.total, unit=snap.unit)
            if snap.phase != self._last_phase:
                fields["phase_started_at"] = now
                self._last_phase = snap.phase
        Job.objects.filter(pk=self.job_id, status=JobStatus.RUNNING).update(**fields)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)
