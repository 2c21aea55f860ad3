"""A job's progress on a terminal, for the management commands that run a job inline
(``job_start(..., inline=True, listener=bar)``): a ``rich`` progress bar per phase (counts,
time left) when the stream is a terminal; otherwise one plain line as each phase ends, with
its counts, so a log or a pipe gets no control codes."""

from __future__ import annotations

from typing import IO, Any

from .progress import Snapshot


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
