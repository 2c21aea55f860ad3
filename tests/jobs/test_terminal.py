"""A command's progress (jobs/terminal.py): a rich bar on a terminal, plain lines elsewhere
(each phase's first and last, a count now and then between)."""

from __future__ import annotations

import io

from jobs import terminal
from jobs.progress import Snapshot


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def feed(listener) -> None:
    listener(Snapshot("Reading j.csv", 0, 4, "lines"))
    listener(Snapshot("Reading j.csv", 1, 4, "lines"))
    listener(Snapshot("Reading j.csv", 4, 4, "lines"))
    listener(Snapshot("Writing", 0, None, "questions"))
    listener(Snapshot("Writing", 2, 2, "questions"))


def test_plain_lines_off_a_terminal(monkeypatch):
    out = io.StringIO()
    with terminal.terminal_progress(out) as listener:
        feed(listener)
    assert out.getvalue().splitlines() == [
        "Reading j.csv: 0 of 4 lines",  # 1 of 4 comes too soon after: left out
        "Reading j.csv: 4 of 4 lines",
        "Writing: 0 questions",
        "Writing: 2 of 2 questions",
    ]
    monkeypatch.setattr(terminal, "PLAIN_EVERY", 0.0)
    out = io.StringIO()
    with terminal.terminal_progress(out) as listener:
        feed(listener)
    assert "Reading j.csv: 1 of 4 lines" in out.getvalue()


def test_a_bar_on_a_terminal():
    out = Terminal()
    with terminal.terminal_progress(out) as listener:
        feed(listener)
    text = out.getvalue()
    assert "Reading j.csv" in text and "4/4" in text
    assert "Writing" in text and "2/2" in text and "questions" in text
