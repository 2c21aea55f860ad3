"""``manage.py reliability`` on files: tables with their preamble, samples out and back in
(identical figures), options and errors; no database is touched."""

import contextlib
import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation.metrics.csvio import read_csv
from evaluation.metrics.reliability.samples import draw_samples
from evaluation.metrics.reliability.samples_csv import samples_to_csv
from evaluation.metrics.reliability.tables import SUMMARY_COLUMNS, TABLES

QUESTIONS = [f"t{i}" for i in range(10)]


def write_files(tmp_path):
    rng = np.random.default_rng(0)
    qrels = []
    for q in QUESTIONS:
        for d in range(6):
            grade = int(rng.integers(0, 3))
            qrels.append(f"{q} 0 d{d} {grade}")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    runs = []
    for r in range(3):
        lines = []
        for q in QUESTIONS:
            for rank, d in enumerate(rng.permutation(6)[:4], start=1):
                lines.append(f"{q} Q0 d{d} {rank} {10 - rank} run{r}")
        path = tmp_path / f"run{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    return tmp_path / "qrels", runs


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("reliability", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_summary_has_preamble_and_a_row_per_metric_and_gains(tmp_path):
    qrels, runs = write_files(tmp_path)
    out, _ = run(
        "--qrels", qrels, *runs, "--metrics", "ap,ndcg", "--gains", "default;1:1", "--trials", 50
    )
    preamble, header, rows = read_csv(out)
    assert preamble["table"] == "summary" and preamble["trials"] == "50"
    assert preamble["subset_size"] == "5" and preamble["seed"] == "0"
    assert preamble["metrics"] == "ap,ndcg" and preamble["gains"] == "default;1:1"
    assert header == list(SUMMARY_COLUMNS)
    assert sorted((r[0], r[1]) for r in rows) == [
        ("ap", "1:1"),
        ("ap", "default"),
        ("ndcg", "1:1"),
        ("ndcg", "default"),
    ]
    tau = {(r[0], r[1]): r[-1] for r in rows}
    assert tau["ap", "default"] == "1"


@pytest.mark.parametrize("table", sorted(TABLES))
def test_samples_written_and_read_back_give_identical_tables(tmp_path, table):
    qrels, runs = write_files(tmp_path)
    samples = tmp_path / "samples.csv"
    first, _ = run(
        "--qrels",
        qrels,
        *runs,
        "--trials",
        40,
        "--seed",
        3,
        "--subset-size",
        4,
        "--samples-out",
        samples,
        "--table",
        table,
    )
    again, _ = run("--qrels", qrels, *runs, "--samples-in", samples, "--table", table)
    assert first == again
    assert read_csv(samples.read_text())[0]["subset_size"] == "4"


def test_output_file_and_pairs_table(tmp_path):
    qrels, runs = write_files(tmp_path)
    target = tmp_path / "pairs.csv"
    out, _ = run("--qrels", qrels, *runs, "--trials", 30, "--table", "pairs", "--output", target)
    assert out == ""
    _, header, rows = read_csv(target.read_text())
    assert header[:4] == ["metric", "gains", "run_x", "run_y"]
    assert [(r[2], r[3]) for r in rows] == [("run0", "run1"), ("run0", "run2"), ("run1", "run2")]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--subset-size", "6"], "subset size"),
        (["--trials", "0"], "trials"),
        (["--tukey-trials", "0"], "tukey-trials"),
        (["--metrics", "nope"], "unknown metric"),
        (["--gains", "x:y"], "gain profile"),
    ],
)
def test_bad_options(tmp_path, extra, message):
    qrels, runs = write_files(tmp_path)
    with pytest.raises(CommandError, match=message):
        run("--qrels", qrels, *runs, *extra)


def test_one_run_is_not_enough(tmp_path):
    qrels, runs = write_files(tmp_path)
    with pytest.raises(CommandError, match="at least two"):
        run("--qrels", qrels, runs[0])


def test_samples_for_other_questions_are_refused(tmp_path):
    qrels, runs = write_files(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text(samples_to_csv(draw_samples(list("abcdefghij"), trials=5)))
    with pytest.raises(CommandError, match="other questions"):
        run("--qrels", qrels, *runs, "--samples-in", other)
    other.write_text("not,a,samples,file\n")
    with pytest.raises(CommandError, match="not a samples file"):
        run("--qrels", qrels, *runs, "--samples-in", other)


def test_tukey_trials_are_their_own(tmp_path):
    qrels, runs = write_files(tmp_path)
    out, _ = run("--qrels", qrels, *runs, "--trials", 30, "--tukey-trials", 7, "--table", "pairs")
    preamble, header, rows = read_csv(out)
    assert preamble["tukey_trials"] == "7" and preamble["trials"] == "30"
    p_tukey = [float(r[header.index("p_tukey")]) for r in rows]
    assert all(abs(p * 7 - round(p * 7)) < 1e-4 for p in p_tukey)  # multiples of 1/7


@pytest.mark.slow
def test_qa_reliability_is_the_same_command_without_django(tmp_path):
    """The console script gives the manage.py command's bytes and never imports Django."""
    import subprocess
    import sys

    qrels, runs = write_files(tmp_path)
    args = ["--qrels", qrels, *runs, "--trials", "50", "--seed", "3", "--table", "pairs"]
    expected, _ = run(*args)
    code = (
        "import sys\nfrom evaluation.metrics.reliability_cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "assert 'django' not in sys.modules, 'django imported'\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluation.metrics.reliability_cli",
            "--qrels",
            str(qrels),
            str(runs[0]),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "at least two run files" in bad.stderr


def pair_figures(text):
    """The pairs table per unordered pair of runs, oriented from the smaller name."""
    _, header, rows = read_csv(text)
    out = {}
    for r in rows:
        a, b = r[2], r[3]
        figures = dict(zip(header[4:], r[4:], strict=True))
        if a > b:
            a, b = b, a
            d = figures["difference"]
            if d != "0":
                figures["difference"] = d[1:] if d.startswith("-") else "-" + d
        out[(r[0], r[1], a, b)] = figures
    return out


def test_the_order_of_the_run_files_changes_no_figure(tmp_path):
    """The same samples and the run files in another order: the very same figures per
    named run and pair (the randomised Tukey HSD permutes the runs in name order)."""
    qrels, runs = write_files(tmp_path)
    samples = tmp_path / "samples.csv"
    common = ["--qrels", qrels, "--metrics", "ap,rr", "--gains", "default;1:1"]
    first, _ = run(
        *common, *runs, "--trials", 200, "--seed", 4, "--samples-out", samples, "--table", "pairs"
    )
    shuffled = [runs[2], runs[0], runs[1]]
    for again in (
        run(*common, *shuffled, "--samples-in", samples, "--table", "pairs")[0],
        run(*common, *shuffled, "--trials", 200, "--seed", 4, "--table", "pairs")[0],
    ):
        assert pair_figures(again) == pair_figures(first)
        assert [r[2:4] for r in read_csv(again)[2]][:3] == [
            ["run2", "run0"],
            ["run2", "run1"],
            ["run0", "run1"],
        ]
    for table in ("summary", "curves", "runs"):
        one, _ = run(*common, *runs, "--samples-in", samples, "--table", table)
        two, _ = run(*common, *shuffled, "--samples-in", samples, "--table", table)
        if table == "runs":
            one, two = sorted(one.splitlines()), sorted(two.splitlines())
        assert one == two


def test_the_samples_file_keeps_the_tukey_trials(tmp_path):
    """--tukey-trials goes into the samples file and comes back with it; a file without
    it (an older one) gives B permutations; --tukey-trials given again overrides it."""
    qrels, runs = write_files(tmp_path)
    samples = tmp_path / "samples.csv"
    args = ["--qrels", qrels, *runs, "--table", "pairs"]
    first, _ = run(*args, "--trials", 30, "--tukey-trials", 7, "--samples-out", samples)
    assert read_csv(samples.read_text())[0]["tukey_trials"] == "7"
    again, _ = run(*args, "--samples-in", samples)
    assert again == first and read_csv(again)[0]["tukey_trials"] == "7"
    older = tmp_path / "older.csv"
    older.write_text(samples.read_text().replace("# tukey_trials=7\n", ""))
    plain, _ = run(*args, "--trials", 30)
    assert run(*args, "--samples-in", older)[0] == plain
    assert read_csv(plain)[0]["tukey_trials"] == "30"
    out, _ = run(*args, "--samples-in", samples, "--tukey-trials", 11)
    preamble, header, rows = read_csv(out)
    assert preamble["tukey_trials"] == "11"
    p_tukey = [float(r[header.index("p_tukey")]) for r in rows]
    assert all(abs(p * 11 - round(p * 11)) < 1e-4 for p in p_tukey)


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--trials", "1000"], "--trials"),
        (["--seed", "0"], "--seed"),
        (["--subset-size", "5"], "--subset-size"),
        (["--seed", "3", "--trials", "20"], "--trials, --seed"),
    ],
)
def test_samples_in_refuses_the_sampling_options(tmp_path, extra, named):
    """The samples file fixes B, c and the seed: giving them as well is an error (exit
    status 2, the options named), even with the values the file has."""
    from evaluation.metrics.reliability_cli import main

    qrels, runs = write_files(tmp_path)
    samples = tmp_path / "samples.csv"
    run("--qrels", qrels, *runs, "--trials", 20, "--samples-out", samples)
    with pytest.raises(CommandError, match=f"--samples-in.*{named}") as e:
        run("--qrels", qrels, *runs, "--samples-in", samples, *extra)
    assert e.value.returncode == 2
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["--qrels", str(qrels), *map(str, runs), "--samples-in", str(samples), *extra])
    assert code == 2 and named in err.getvalue()
