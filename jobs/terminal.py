"""A job's progress in a terminal: what a management command running a job inline shows
(``job_start(..., inline=True, listener=...)``).  On a terminal, a ``rich`` progress bar per
phase, with its counts, elapsed time and an estimate; elsewhere (a pipe, a log, a test's
buffer) plain lines: one as each phase starts and ends, and a count now and then, so a log
is not flooded."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from .progress import Snapshot

# seconds between two plain lines of one phase (its first and last are always written)
PLAIN_EVERY = 5.0

Listener = Callable[[Snapshot], None]


def progress_line(snap: Snapshot) -> str:
    """``Reading j.csv: 1200 of 5000 lines``."""
    total = f" of {snap.total}" if snap.total is not None else ""
    unit = f" {snap.unit}" if snap.unit else ""
    return f"{snap.phase or 'Working'}: {snap.done}{total}{unit}"


@contextmanager
def terminal_progress(stream: Any) -> Iterator[Listener]:
    """A listener drawing a job's progress on ``stream`` (a file, or a command's
    ``self.stderr``) while the block runs."""
    # a command's OutputWrapper appends a line ending to every write: rich wants the file
    out: IO[str] = getattr(stream, "_out", stream)
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        with _bar(out) as listener:
            yield listener
    else:
        yield _plain(out)


@contextmanager
def _bar(out: IO[str]) -> Iterator[Listener]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
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
    current: dict[str, Any] = {"phase": None, "task": None}

    def listener(snap: Snapshot) -> None:
        if snap.phase != current["phase"] or current["task"] is None:
            task: TaskID | None = current["task"]
            if task is not None:  # the step before ended: its bar full
                before = bar.tasks[-1]
                final = before.total if before.total is not None else max(before.completed, 1)
                bar.update(task, total=final, completed=final)
            current["phase"] = snap.phase
            current["task"] = bar.add_task(snap.phase or "Working", total=snap.total, unit="")
        bar.update(current["task"], completed=snap.done, total=snap.total, unit=snap.unit)

    with bar:
        yield listener


def _plain(out: IO[str]) -> Listener:
    last: dict[str, Any] = {"phase": None, "line": None, "at": 0.0}

    def listener(snap: Snapshot) -> None:
        line = progress_line(snap)
        if line == last["line"]:
            return
        now = time.monotonic()
        ended = snap.total is not None and snap.done >= snap.total
        if snap.phase != last["phase"] or ended or now - last["at"] >= PLAIN_EVERY:
            out.write(line + "\n")
            out.flush()
            last.update(phase=snap.phase, line=line, at=now)

    return listener
