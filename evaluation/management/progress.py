"""Running a job function from a management command (issue 24: one code path, the job
function, whether a worker or a command runs it): ``run_inline`` records the job and runs
it in this process, its progress on the command's terminal as a ``rich`` bar (plain lines
now and then when the output is not a terminal: a pipe, a log, a test's buffer)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from jobs.models import Conflict, Job
from jobs.progress import Snapshot
from jobs.runner import run_job

# seconds between two plain lines of one phase
PLAIN_EVERY = 5.0


def run_inline(
    *,
    kind: str,
    label: str,
    func: str,
    stream: Any,
    collection_id: int | None = None,
    params: dict | None = None,
    input: bytes | None = None,
    input_name: str = "",
) -> Job:
    """Record a job for the command line (no user: ``params["cli"]``) and run it here,
    showing its progress on ``stream``; the job's row as it ended."""
    job = Job.objects.create(
        kind=kind,
        label=label[:300],
        func=func,
        user=None,
        collection_id=collection_id,
        conflict=Conflict.SHARED if collection_id else Conflict.NONE,
        params={**(params or {}), "cli": True},
        input=input,
        input_name=input_name[:255],
    )
    with terminal_progress(stream) as listener:
        ended = run_job(job.pk, listener=listener)
    return ended or job


@contextmanager
def terminal_progress(stream: Any) -> Iterator[Callable[[Snapshot], None]]:
    """A listener drawing a job's progress on ``stream`` (a command's ``self.stderr``)."""
    out: IO[str] = getattr(stream, "_out", stream)  # a command's OutputWrapper wraps it
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[unit]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=out),
        )
        tasks: dict[str, Any] = {}

        def draw(snap: Snapshot) -> None:
            if snap.phase not in tasks:
                for task in tasks.values():  # the step before ended: its bar full
                    done = bar.tasks[task].total or bar.tasks[task].completed
                    bar.update(task, completed=done, total=done)
                tasks[snap.phase] = bar.add_task(snap.phase or "Working", total=snap.total, unit="")
            bar.update(tasks[snap.phase], completed=snap.done, total=snap.total, unit=snap.unit)

        with bar:
            yield draw
        return
    last: dict[str, Any] = {"phase": None, "at": 0.0}

    def plain(snap: Snapshot) -> None:
        now = time.monotonic()
        ended = snap.total is not None and snap.done >= snap.total > 0
        if ended and last.get("ended") == snap.phase:
            return  # its last line is written
        if snap.phase != last["phase"] or ended or now - last["at"] >= PLAIN_EVERY:
            if ended:
                last["ended"] = snap.phase
            total = f" of {snap.total}" if snap.total is not None else ""
            out.write(f"{snap.phase or 'Working'}: {snap.done}{total} {snap.unit}".rstrip() + "\n")
            out.flush()
            last.update(phase=snap.phase, at=now)

    yield plain


def issue_lines(job: Job, limit: int = 50) -> str:
    """A failed job's errors as the commands print them (``file:line: message``), the
    first ``limit`` and a count of the rest."""
    lines = [
        f"{e['file']}:{e['line']}: {e['message']}"
        if e.get("line") is not None
        else f"{e['file'] or ''}: {e['message']}".lstrip(": ")
        for e in job.errors[:limit]
    ]
    if len(job.errors) > limit:
        lines.append(f"... and {len(job.errors) - limit} more error(s)")
    return "\n".join(lines)
