"""A job's progress on a terminal, for the management commands that run a job inline
(``job_start(..., inline=True, listener=...)``): a ``rich`` progress bar per phase (counts,
elapsed time, time left) when the stream is a terminal (``TerminalProgress``); elsewhere (a
pipe, a log, a test's buffer) plain lines, so a log gets no control codes:
``terminal_progress`` writes one as each phase starts and ends and a count now and then;
``TerminalProgress`` off a terminal writes one per phase, with its counts, to another
stream (``import_run`` puts them beside its result on stdout)."""

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
        with TerminalProgress(out, tty=True) as listener:
            yield listener
    else:
        yield _plain(out)


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


class TerminalProgress:
    """A listener for ``jobs.runner.run_job`` (a context manager: the bar is drawn between
    enter and exit).  ``bar_stream``: where the bar goes (a terminal's stderr, a raw file);
    ``line_stream``: where the plain lines go when ``bar_stream`` is no terminal (a
    command's ``self.stdout``); ``quiet``: neither."""

    def __init__(
        self,
        bar_stream: IO[str],
        line_stream: Any | None = None,
        *,
        tty: bool | None = None,
        quiet: bool = False,
    ) -> None:
        self.bar_stream = bar_stream
        self.line_stream = line_stream
        isatty = getattr(bar_stream, "isatty", None)
        self.tty = (bool(isatty and isatty()) if tty is None else tty) and not quiet
        self.quiet = quiet
        self._phase: str | None = None
        self._bar: Any = None
        self._task: Any = None
        self._last: Snapshot | None = None

    def __enter__(self) -> TerminalProgress:
        if self.tty:
            # imported here: a command that is not on a terminal does not pay for rich
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[unit]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.bar_stream, force_terminal=True),
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._line(self._last)
        self._last = None

    def _line(self, snap: Snapshot | None) -> None:
        """The plain line of a phase that ended: what it did, with its counts."""
        if snap is None or self.tty or self.quiet or self.line_stream is None:
            return
        counts = (
            f"{snap.done:,} {snap.unit}"
            if snap.total is None or snap.done == snap.total
            else f"{snap.done:,} of {snap.total:,} {snap.unit}"
        )
        self.line_stream.write(f"{snap.phase or 'Working'}: {counts}".rstrip(": "))

    def __call__(self, snap: Snapshot) -> None:
        if self.quiet:
            return
        if snap.phase != self._phase:
            self._phase = snap.phase
            self._line(self._last)
            if self._bar is not None:
                if self._task is not None:
                    self._bar.stop_task(self._task)
                self._task = self._bar.add_task(
                    snap.phase or "Working", total=snap.total, unit=snap.unit
                )
        self._last = snap
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=snap.done, total=snap.total, unit=snap.unit)
