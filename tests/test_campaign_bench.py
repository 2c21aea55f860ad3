"""bench/campaign.py without its server: the command line (operations checked), a row and
a page as the table prints them, and the closing lines (requests over 2 s, the targets)."""

import pytest

from bench.campaign import (
    DEFAULT_OPS,
    Bench,
    PageRow,
    Request,
    Row,
    format_page,
    format_row,
    parse_args,
    summary,
)


def test_the_operations_default_to_all_but_layers_and_unknown_ones_are_refused(capsys):
    args = parse_args([])
    assert args.ops == list(DEFAULT_OPS) and "layers" not in args.ops
    assert (args.size, args.seed, args.trials) == ("S", 1, 1000)
    assert parse_args(["--ops", "pool, mode"]).ops == ["pool", "mode"]
    with pytest.raises(SystemExit):
        parse_args(["--ops", "pool,nope"])
    assert "unknown operation(s) nope" in capsys.readouterr().err


def test_a_row_flags_a_request_over_two_seconds():
    row = Row("pool all runs", wall=3.5, job=2.25, cpu_worker=1.5, slowest=2.4, requests=4)
    line = format_row(row)
    assert line.startswith("pool all runs") and "   3.50    2.25" in line and "!!>2s" in line
    assert "!!" not in format_row(Row("pool one run", slowest=1.9))
    assert "      -" in format_row(Row("export", job=None))


def test_a_page_row_gives_p50_p95_and_flags_a_slow_warm_p95():
    page = PageRow("runs list", "organizer", cold=[0.5, 0.7], warm=[0.1] * 8 + [0.4] * 2)
    line = format_page(page)
    assert "0.600" in line and "0.100" in line and "warm p95 >= 0.3 s" in line
    assert "!!" not in line
    assert "!! a request > 2 s" in format_page(PageRow("ranking", "participant", cold=[2.5]))


def test_the_summary_lists_slow_requests_and_checks_the_targets():
    bench = Bench.__new__(Bench)
    bench.rows = [
        Row("archive export", wall=10.0),
        Row("archive import", wall=25.0),
        Row("judgments import", wall=1.0),
    ]
    bench.pages = [PageRow("judging page", "assessor", warm=[0.1, 0.2])]
    log = [
        Request("archive import", "POST", "/archives/import/", 302, 2.5),
        Request("pages", "GET", "/queue/", 200, 0.1),
    ]
    lines = summary(bench, log)
    assert lines[0] == "!! 1 REQUEST(S) OVER 2 s:"
    assert "POST /archives/import/ -> 302  (archive import)" in lines[1]
    text = "\n".join(lines)
    assert "archive export + import         35.00 s  (< 30 s: NOT met)" in text
    assert "judgments import                 1.00 s  (< 5 s: met)" in text
    assert "(< 0.3 s: met; judging page, assessor)" in text
    assert summary(bench, log[1:])[0] == "no request over 2 s (1 requests)"
    # an operation that failed is not held against a target
    bench.rows[1].note = "FAILED: POST /archives/import/: no answer"
    assert "archive export + import" not in "\n".join(summary(bench, log))
