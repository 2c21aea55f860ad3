"""``run_rows`` tells a caller how many lines it has read (a job's progress bar), in each of
its three readers, and reads the same rows and problems with or without being asked."""

from __future__ import annotations

import pytest

from evaluation.metrics import parsers

FILES = {
    "qa": "".join(f"Q{i}\t1\tanswer {i}\n" for i in range(1, 8)),
    "csv": "question_id,rank,answer\n" + "".join(f"Q{i},1,answer {i}\n" for i in range(1, 7)),
    "trec": "".join(f"Q{i} Q0 doc{i} 1 1.5 tag\n" for i in range(1, 8)),
}


@pytest.mark.parametrize("kind", sorted(FILES))
def test_run_rows_reports_lines_read(kind, monkeypatch):
    monkeypatch.setattr(parsers, "PROGRESS_LINES", 3)
    data = (FILES[kind] + "bad line\n").encode()
    fmt = "trec" if kind == "trec" else "qa"
    calls = []
    rows, issues = parsers.run_rows(
        data, filename="r", fmt=fmt, progress=lambda *a: calls.append(a)
    )
    assert (rows, issues) == parsers.run_rows(data, filename="r", fmt=fmt)
    assert issues and issues[0].line == 8  # the bad line is still found, with its line
    assert calls == [(0, 8, "lines"), (3, 8, "lines"), (6, 8, "lines"), (8, 8, "lines")]
