"""``manage.py score`` on files: formats, options, errors; no database is touched."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command

JUDGMENTS = """question_id,synset_id,answer,level
beatles,1,Sir Paul McCartney,S
beatles,1,Paul McCartney,S
beatles,1,McCartney,A
beatles,1,Paul,B
beatles,2,John Lennon,S
beatles,2,Lennon,A
beatles,2,John,B
beatles,3,George Harrison,S
beatles,3,Harrison,A
beatles,3,George,B
beatles,4,Ringo Starr,S
beatles,4,Starr,A
beatles,4,Ringo,B
love,1,NIL,A
kawabata,1,"December 10, 1968",S
kawabata,1,1968,B
"""

NOAF = (
    "beatles\t1\tMcCartney\nbeatles\t2\tLennon\nbeatles\t3\tPaul\n"
    "beatles\t4\tGeorge Harrison\nbeatles\t5\tStarr\nlove\t1\tNIL\nother\t1\tx\n"
)


@pytest.fixture
def files(tmp_path):
    j = tmp_path / "judgments.csv"
    j.write_text(JUDGMENTS)
    r = tmp_path / "noAF.tsv"
    r.write_text(NOAF)
    return j, r


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("score", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_csv_rows_and_mean_over_judged_questions(files):
    j, r = files
    out, err = run("--judgments", j, r, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "run",
        "question_id",
        "q_measure",
        "r_measure",
        "rr",
        "ap",
        "ndcg@5",
        "unjudged",
    ]
    by_q = {row["question_id"]: row for row in rows}
    assert set(by_q) == {"beatles", "love", "kawabata", "all"}
    assert float(by_q["beatles"]["q_measure"]) == pytest.approx(0.722426, abs=1e-6)
    assert float(by_q["beatles"]["r_measure"]) == pytest.approx(0.625)
    assert float(by_q["love"]["q_measure"]) == 1.0
    assert float(by_q["kawabata"]["q_measure"]) == 0.0  # missing from the run: empty ranking
    assert float(by_q["all"]["q_measure"]) == pytest.approx((0.722426 + 1 + 0) / 3, abs=1e-6)
    assert "1 answer(s) for questions the judgments do not know" in err


def test_trec_format_and_metric_options(files):
    j, r = files
    out, _ = run(
        "--judgments",
        j,
        r,
        "--format",
        "trec",
        "--metrics",
        "rr,p@1,rbp_trunc",
        "--rbp-p",
        "0.8",
        "--gains",
        "1:1:1",
        "--beta",
        "2",
    )
    lines = [line.split("\t") for line in out.strip().splitlines()]
    assert all(len(parts) == 3 for parts in lines)
    assert ["rr", "beatles", "1.0000"] in lines
    assert ["p@1", "all", f"{2 / 3:.4f}"] in lines
    assert {parts[0] for parts in lines} == {"rr", "p@1", "rbp_trunc"}


def test_table_format_and_qrels(tmp_path):
    q = tmp_path / "qrels"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    r = tmp_path / "run"
    r.write_text("1 Q0 b 1 2.0 mine\n1 Q0 a 2 1.0 mine\n2 Q0 c 1 1.0 mine\n")
    out, _ = run("--qrels", q, r, "--metrics", "ap,ndcg")
    assert "run: mine" in out and "all" in out
    assert "0.5000" in out  # AP of topic 1


def test_bad_run_file_prints_errors_and_fails(files, tmp_path):
    j, _ = files
    bad = tmp_path / "bad.tsv"
    bad.write_text("beatles\t1\tPaul\nbeatles\t1\tJohn\nbeatles\tx\tGeorge\n")
    with pytest.raises(CommandError) as e:
        run("--judgments", j, bad)
    assert e.value.returncode == 1
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("score", "--judgments", str(j), str(bad), stdout=io.StringIO(), stderr=err)
    assert "bad.tsv:2: question 'beatles' has rank 1 twice (line 1)" in err.getvalue()
    assert "bad.tsv:3: rank 'x' is not a positive integer" in err.getvalue()


def test_bad_options_fail_clearly(files):
    j, r = files
    for args, message in [
        (("--metrics", "q_measure,bogus"), "unknown metric"),
        (("--gains", "3:x"), "bad gain profile"),
        (("--gains", "3:2"), r"2 value\(s\) but there are 3 levels"),
    ]:
        with pytest.raises(CommandError, match=message):
            run("--judgments", j, r, *args)
    with pytest.raises(CommandError, match="cannot read"):
        run("--judgments", j, "/nonexistent/run.tsv")


def test_custom_levels_and_exact_matching(tmp_path):
    j = tmp_path / "j.csv"
    j.write_text("question_id,synset_id,answer,level\nq,1,Tokyo,H\nq,2,Japan,L\n")
    r = tmp_path / "r.tsv"
    r.write_text("q\t1\ttokyo\nq\t2\tJapan\n")
    out, _ = run(
        "--judgments",
        j,
        r,
        "--levels",
        "H,L",
        "--match",
        "exact",
        "--metrics",
        "rr",
        "--format",
        "csv",
    )
    assert "r,q,0.500000" in out


def test_every_error_of_every_file_is_printed(files, tmp_path):
    """All errors at once, each file's in line order: not the first 50, not one file."""
    j = tmp_path / "j.csv"
    j.write_text("question_id,synset_id,answer,level\nq,1,Paris,S\nq,2,paris,A\nq,1,Lyon,Z\n")
    bad = tmp_path / "bad.tsv"
    bad.write_text("".join(f"q\t{i}\tx{i}\n" if i % 2 else f"q\tr{i}\tx\n" for i in range(1, 121)))
    bad2 = tmp_path / "bad2.tsv"
    bad2.write_text("q\t1\t\u3000\n")
    err = io.StringIO()
    with pytest.raises(CommandError) as e:
        call_command(
            "score", "--judgments", str(j), str(bad), str(bad2), stdout=io.StringIO(), stderr=err
        )
    assert e.value.returncode == 1 and "63 error(s)" in str(e.value)
    lines = err.getvalue().splitlines()
    assert len(lines) == 63 and "more error" not in err.getvalue()
    assert lines[0].startswith(f"{j}:3: ") and "one string has one judgment" in lines[0]
    assert lines[1].startswith(f"{j}:4: unknown level 'Z'")
    assert lines[2] == f"{bad}:2: rank 'r2' is not a positive integer"
    assert lines[61] == f"{bad}:120: rank 'r120' is not a positive integer"
    assert lines[62] == f"{bad2}:1: empty answer for question 'q' at rank 1"


def test_match_squad(tmp_path):
    j = tmp_path / "j.csv"
    j.write_text("question_id,synset_id,answer,level\nborder,1,Radcliffe Line,S\n")
    r = tmp_path / "r.tsv"
    r.write_text("border\t1\tThe Radcliffe Line.\n")
    out, _ = run("--judgments", j, r, "--format", "csv", "--metrics", "rr")
    assert out.splitlines()[1:] == ["r,border,0.000000,1", "r,all,0.000000,1"]
    out, _ = run("--judgments", j, r, "--format", "csv", "--metrics", "rr", "--match", "squad")
    assert out.splitlines()[1:] == ["r,border,1.000000,0", "r,all,1.000000,0"]


def test_csv_counts_unjudged_answers_and_full_precision(files, tmp_path):
    j, _ = files
    r = tmp_path / "mixed.tsv"
    r.write_text(
        "beatles\t1\tMcCartney\nbeatles\t2\tYoko\nbeatles\t3\tBrian\n"
        "kawabata\t1\tsnow\nkawabata\t2\t1968\n"
    )
    out, _ = run("--judgments", j, r, "--format", "csv", "--metrics", "q_measure")
    rows = {row["question_id"]: row for row in csv.DictReader(io.StringIO(out))}
    assert {q: row["unjudged"] for q, row in rows.items()} == {
        "beatles": "2",
        "love": "0",
        "kawabata": "1",
        "all": "3",
    }
    assert rows["beatles"]["q_measure"] == "0.187500"
    out, _ = run(
        "--judgments", j, r, "--format", "csv", "--metrics", "q_measure", "--precision", "full"
    )
    rows = {row["question_id"]: row for row in csv.DictReader(io.StringIO(out))}
    assert rows["beatles"]["q_measure"] == repr(0.1875)
    trec, _ = run(
        "--judgments", j, r, "--format", "trec", "--metrics", "q_measure", "--precision", "full"
    )
    value = next(
        line.split("\t")[2] for line in trec.splitlines() if line.startswith("q_measure\tall\t")
    )
    assert value == repr(float(rows["all"]["q_measure"]))
    assert len(value) > 8  # every digit, not 4 decimals
