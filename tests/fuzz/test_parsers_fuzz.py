"""Fuzzing every parser: whatever the bytes, a parser returns data or raises InputError
with located issues -- never another exception.  ``make test`` runs a small sample;
``make fuzz`` (FUZZ_EXAMPLES, default 12,500 per test: over 100,000 inputs in all) runs
the long campaign."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from evaluation.metrics import InputError, Ranking, evaluate
from evaluation.metrics.arrays import factorize
from evaluation.metrics.fast import available, read_inputs
from evaluation.metrics.judgment_parsers import _slow_qrels, parse_judgments_csv, parse_qrels
from evaluation.metrics.parsers import (
    parse_flat_answers,
    parse_qa_run,
    parse_questions_csv,
    parse_run,
    parse_trec_run,
    run_rows,
    trec_order,
)

LONG = os.environ.get("FUZZ_EXAMPLES")
EXAMPLES = int(LONG) if LONG else 150
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)

PARSERS = [
    parse_flat_answers,
    parse_judgments_csv,
    parse_qa_run,
    parse_qrels,
    parse_questions_csv,
    parse_run,
    parse_trec_run,
]

# pieces that make inputs look almost right
CELLS = st.one_of(
    st.sampled_from(
        [
            "Q1",
            "Q2",
            "1",
            "0",
            "-1",
            "2",
            "S",
            "A",
            "B",
            "X",
            "NIL",
            "Paul",
            '=HYPERLINK("x")',
            "+1",
            "-2",
            "@SUM(A1)",
            "",
            " ",
            "Q0",
            "1e3",
            "nan",
            "inf",
            "0x10",
            "1_0",
            "٣",
            "ＳＩＸ",
            "\u00a0",
            "\u3000",
            "a\x00b",
            '"',
            "a,b",
            "#",
            "question_id",
            "synset_id",
            "answer",
            "level",
            "rank",
            "score",
            "question",
        ]
    ),
    st.text(max_size=12),
)
SEPS = st.sampled_from(["\t", ",", " ", "  ", "\t ", ";"])
ENDS = st.sampled_from(["\n", "\r\n", "\r", ""])


@st.composite
def almost_files(draw) -> bytes:
    """Lines of plausible cells joined by plausible separators, in some encoding."""
    rows = draw(st.lists(st.lists(CELLS, max_size=8), max_size=12))
    sep, end = draw(SEPS), draw(ENDS)
    text = end.join(sep.join(r) for r in rows)
    if draw(st.booleans()):
        header = draw(
            st.sampled_from(
                [
                    "question_id,synset_id,answer,level",
                    "question_id,question",
                    "question_id,answer",
                    "question_id,rank,answer,score",
                    "#comment",
                ]
            )
        )
        text = header + "\n" + text
    if draw(st.integers(0, 20)) == 0:
        text += "x" * draw(st.sampled_from([70000, 200]))  # a huge line
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp932"]))
    return text.encode(encoding, errors="replace")


@st.composite
def trec_inputs(draw, kind: str) -> bytes:
    """A well-formed qrels or TREC run (a docno once per topic), or, in a third of the
    draws, one with an almost-right line put in somewhere."""
    docs = st.sampled_from(["d1", "d2", "d3", "D-4", "doc:5", "NIL"])
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(["Q1", "Q2", "3"]), docs),
            min_size=1,
            max_size=12,
            unique=True,
        )
    )
    sep, end = draw(st.sampled_from([" ", "\t", "  "])), draw(st.sampled_from(["\n", "\r\n"]))
    if kind == "qrels":
        lines = [sep.join([q, "0", d, str(draw(st.integers(-1, 3)))]) for q, d in pairs]
    else:
        lines = [
            sep.join([q, "Q0", d, str(k + 1), repr(draw(st.floats(-5, 5, allow_nan=False))), "tag"])
            for k, (q, d) in enumerate(pairs)
        ]
    if draw(st.sampled_from([False, False, True])):
        lines.insert(draw(st.integers(0, len(lines))), sep.join(draw(st.lists(CELLS, max_size=7))))
    return (end.join(lines) + end).encode()


def check(parser, data: bytes) -> None:
    try:
        parser(data, filename="fuzz")
    except InputError as e:
        assert e.issues, "an InputError must say what is wrong"
        for issue in e.issues:
            assert issue.file == "fuzz" and issue.message
            assert issue.line is None or issue.line >= 1


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.__name__)
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(parser, data):
    check(parser, data)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.__name__)
@FUZZ
@given(data=almost_files())
def test_almost_right_files(parser, data):
    check(parser, data)


@FUZZ
@given(
    run=st.sampled_from([1, 1, 1, 0]).flatmap(
        lambda k: trec_inputs("run") if k else almost_files()
    ),
    qrels=st.sampled_from([1, 1, 1, 0]).flatmap(
        lambda k: trec_inputs("qrels") if k else almost_files()
    ),
)
def test_fast_reader_agrees_or_steps_aside(run, qrels):
    """The C reader never accepts what the Python parsers refuse, nor scores differently."""
    try:
        slow_q = parse_qrels(qrels, filename="q")
        slow_r = parse_run(run, filename="r")
    except InputError:
        slow_q = slow_r = None
    fast = read_inputs(qrels=qrels, runs=[("r", run)])
    if slow_q is None:
        event("refused by both")
        assert fast is None
        return
    event("read by both" if fast is not None else "read by the Python parsers only")
    if fast is not None:
        a = evaluate(*fast[:1], fast[1], ["q_measure", "ap"]).per_question
        b = evaluate(slow_q, [slow_r], ["q_measure", "ap"]).per_question
        assert list(a) == list(b)
        for name in a:
            assert a[name].round(12).equals(b[name].round(12))


# -- one set of rules for every reader -----------------------------------------------------
# The fast reader (the optional C reader _fastparse) and the line readers must
# accept the same files and read them the same way: ranks that are not plain decimal
# integers, fields of Unicode spaces only, lone CR line ends and odd separators included.
RANKS = st.one_of(
    st.integers(1, 6).map(str),
    st.sampled_from(
        [
            "+2",
            "02",
            "True",
            "False",
            "1.0",
            "1.",
            "1e3",
            "10e-1",
            "0",
            "-1",
            "\u0663",
            "1\u0663",
            "1_0",
            " 1",
            "1 ",
            "\u00a01",
            "1\u3000",
            "1000000000",
            "1000000001",
            "99999999999999999999",
            "0x1",
            "",
        ]
    ),
)
QIDS = st.sampled_from(
    ["Q1", "Q2", "q1", " Q1", "Q1\u3000", "\u00a0", "", "Q\u3000X", "\x1cQ2", "Q#"]
)
ANSWERS = st.sampled_from(
    [
        "Paul",
        "paul",
        "NIL",
        "\u00a0",
        "\u3000",
        "\u3000\u00a0",
        " Paul",
        "Paul\u00a0",
        "Pa\u3000ul",
        "\x1c",
        "a\x1cb",
        "",
        "\u5343\u8449\u770c",
        "\u2028",
        "x\x0by",
        "x\x85",
    ]
)
SCORES = st.sampled_from(
    [
        None,
        "",
        "0.5",
        "1e3",
        "-2",
        "nan",
        "inf",
        "1_0",
        "\u00a01",
        "\u0661",
        "0x1",
        "1e999",
        "True",
        "TRUE",
        "+.5",
        "1d3",
        "1e",
    ]
)
LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])


GOOD_QIDS = st.sampled_from(["Q1", "Q2", "q1", "Q#"])
GOOD_RANKS = st.integers(1, 6).map(str)
GOOD_ANSWERS = st.sampled_from(["Paul", "NIL", "Pa\u3000ul", "\u5343\u8449\u770c", "Ringo"])
GOOD_SCORES = st.sampled_from([None, "0.5", "1e3", "-2"])


def mostly_good(odd, good, *, key, only_good: bool = False):
    """Lists of ``odd`` rows, or (most draws) of ``good`` rows, unique by ``key``, with in
    a third of those one ``odd`` row put in somewhere.  ``only_good``: good rows only."""

    @st.composite
    def good_rows(draw):
        rows = draw(st.lists(good, min_size=1, max_size=10, unique_by=key))
        if not only_good and draw(st.sampled_from([False, False, True])):
            rows.insert(draw(st.integers(0, len(rows))), draw(odd))
        return rows

    if only_good:
        return good_rows()
    return st.sampled_from([True, True, True, False]).flatmap(
        lambda clean: good_rows() if clean else st.lists(odd, min_size=1, max_size=10)
    )


def outcome(fn):
    """("ok", value) or ("error", [(line, message)]) of ``fn()``."""
    try:
        return "ok", fn()
    except InputError as e:
        return "error", [(i.line, i.message) for i in e.issues]


def ranking_rows(r):
    score = [None if s != s else float(s) for s in r.score] if r.score is not None else None
    return list(r.qid), list(r.text), score


def line_reader_run(data: bytes, fmt: str):
    """The run as the line reader alone reads it, ordered as the parsers order runs."""
    rows, issues = run_rows(data, filename="r", fmt=fmt)
    if issues:
        raise InputError(issues)
    qid = np.asarray([r.question_id for r in rows], dtype=object)
    text = np.asarray([r.answer for r in rows], dtype=object)
    score = np.asarray([r.score for r in rows], dtype=float)
    if fmt == "qa":
        order = np.lexsort((np.asarray([r.rank for r in rows]), factorize(qid)[0]))
    else:
        order = trec_order(factorize(qid)[0], score, text)
    return ranking_rows(Ranking("r", qid[order], text[order], score[order]))


@st.composite
def qa_files(draw, good: bool = False) -> bytes:
    """Rows of odd cells, or (most draws) rows every reader accepts with, in a third of
    those, one odd row put in.  ``good``: only rows every reader accepts."""
    odd = st.tuples(QIDS, RANKS, ANSWERS, SCORES, LINE_ENDS)
    rows = draw(
        mostly_good(
            odd,
            st.tuples(GOOD_QIDS, GOOD_RANKS, GOOD_ANSWERS, GOOD_SCORES, LINE_ENDS),
            key=lambda r: r[:2],
            only_good=good,
        )
    )
    return "".join(
        "\t".join([q, r, a] + ([] if s is None else [s])) + end for q, r, a, s, end in rows
    ).encode()


@st.composite
def trec_files(draw, good: bool = False) -> bytes:
    sep = st.sampled_from([" ", "\t", "  ", "\u3000", "\x0b", "\u00a0"])
    docnos = st.sampled_from(["d1", "d2", "D\u3000", "d\x1c", '"d1"', '"d 2"', 'd"'])
    scores = SCORES.map(lambda s: s or "1")
    tags = st.sampled_from(["tag", "t\u00a0", ""])
    good_sep = st.sampled_from([" ", "\t", "  "])
    rows = draw(
        mostly_good(
            st.tuples(QIDS, sep, docnos, sep, RANKS, sep, scores, sep, tags, LINE_ENDS),
            st.tuples(
                GOOD_QIDS,
                good_sep,
                st.sampled_from(["d1", "d2", "D3", '"d1"', 'd"']),
                good_sep,
                GOOD_RANKS,
                good_sep,
                GOOD_SCORES.map(lambda s: s or "1"),
                good_sep,
                st.just("tag"),
                LINE_ENDS,
            ),
            key=lambda r: (r[0], r[2]),
            only_good=good,
        )
    )
    return "".join(
        f"{q}{s1}Q0{s1}{d}{s2}{r}{s3}{sc}{s4}{t}{end}"
        for q, s1, d, s2, r, s3, sc, s4, t, end in rows
    ).encode()


def _c_reader(data: bytes):
    if not available():
        return None
    j = parse_judgments_csv(b"question_id,synset_id,answer,level\nQ1,1,Paul,S\n")
    fast = read_inputs(qrels=None, judgments=j, runs=[("r", data)])
    return None if fast is None else ranking_rows(fast[1][0])


def qa_read_alike(data: bytes) -> tuple:
    """The parser, the C reader and the line reader: the same run or the same errors."""
    want = outcome(lambda: line_reader_run(data, "qa"))
    assert outcome(lambda: ranking_rows(parse_qa_run(data, filename="r"))) == want
    fast = _c_reader(data)
    event(
        f"{'read' if want[0] == 'ok' else 'refused'} by the line reader; C reader "
        f"{'stepped aside' if fast is None else 'read it'}"
    )
    if fast is not None:
        assert want == ("ok", fast)
    return want


@FUZZ
@given(data=qa_files())
def test_qa_runs_read_alike_on_every_path(data):
    qa_read_alike(data)


@FUZZ
@given(data=qa_files(good=True))
def test_good_qa_runs_are_read_alike_on_every_path(data):
    assert qa_read_alike(data)[0] == "ok"


def trec_read_alike(data: bytes) -> tuple:
    want = outcome(lambda: line_reader_run(data, "trec"))
    assert outcome(lambda: ranking_rows(parse_trec_run(data, filename="r"))) == want
    event(f"run {want[0]}")
    qrels = data.replace(b"Q0", b"0")
    want_q = outcome(lambda: _slow_qrels(qrels.decode("utf-8"), "r")[1])
    got_q = outcome(lambda: list(parse_qrels(qrels, filename="r").str_text))
    assert got_q == want_q
    return want


@FUZZ
@given(data=trec_files())
def test_trec_runs_read_alike_on_every_path(data):
    trec_read_alike(data)


@FUZZ
@given(data=trec_files(good=True))
def test_good_trec_runs_are_read_alike_on_every_path(data):
    assert trec_read_alike(data)[0] == "ok"


def _csv_cell(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\r\n') else value


def judgments_summary(j):
    return (
        list(j.questions),
        list(j.str_q),
        list(j.str_text),
        list(j.str_synset),
        list(j.str_level),
    )


def judgment_rows(good: bool = False):
    return mostly_good(
        st.tuples(
            QIDS,
            st.sampled_from(["1", "2", "", " 1", "\u3000", "a,b"]),
            ANSWERS,
            st.sampled_from(["S", "A", "", "Z", " S", "\u3000"]),
            LINE_ENDS,
        ),
        st.tuples(
            GOOD_QIDS,
            st.sampled_from(["1", "2", " 1"]),
            GOOD_ANSWERS,
            st.sampled_from(["S", "A", " S"]),
            LINE_ENDS,
        ),
        key=lambda r: (r[0], r[2]),
        only_good=good,
    )


def judgments_read_alike(rows, header_end: str, raw: str | None) -> tuple:
    """The judgments' one reader (the line reader) reads the file or names located
    errors, and reads the same judgments again from the file with LF line ends."""
    data = (
        "question_id,synset_id,answer,level"
        + header_end
        + "".join(",".join(_csv_cell(c) for c in (q, s, a, lv)) + end for q, s, a, lv, end in rows)
    ).encode()
    if raw is not None:  # a row a spreadsheet would not write
        data += raw.encode()
    want = outcome(lambda: judgments_summary(parse_judgments_csv(data, filename="j")))
    event(f"judgments {want[0]}")
    if want[0] == "error":
        assert want[1] and all(line is None or line >= 1 for line, _ in want[1])
    elif raw is None and "\r" not in "".join(c for r in rows for c in r[:4]):
        lf = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        assert outcome(lambda: judgments_summary(parse_judgments_csv(lf, filename="j"))) == want
    return want


@FUZZ
@given(rows=judgment_rows(good=True), header_end=LINE_ENDS)
def test_good_judgments_are_read_alike_on_every_path(rows, header_end):
    assert judgments_read_alike(rows, header_end, None)[0] == "ok"


@FUZZ
@given(
    rows=judgment_rows(),
    header_end=LINE_ENDS,
    raw=st.sampled_from([False, False, True]).flatmap(
        lambda odd: (
            st.sampled_from(
                [
                    '"Q1"x,1,a,S\n',
                    'Q1,1,"a" ,S\n',
                    'Q1,1,a"b,S\n',
                    'Q1,1, "a",S\n',
                    '"Q1,1,a,S\n',
                    "Q1,1,a,S,\n",
                    "Q1,1,a,S,x\n",
                    "Q1,1\n",
                    ",,,\n",
                    "\u3000\n",
                ]
            )
            if odd
            else st.none()
        )
    ),
)
def test_judgments_read_alike_on_every_path(rows, header_end, raw):
    judgments_read_alike(rows, header_end, raw)


@FUZZ
@given(
    rows=st.lists(st.tuples(QIDS, ANSWERS), min_size=1, max_size=10),
    ends=st.lists(LINE_ENDS, min_size=11, max_size=11),
)
def test_line_ends_are_one_rule_for_csv_files(rows, ends):
    """LF, CRLF and a lone CR end a line in every reader: the same rows on the same lines
    (or the same errors), whichever ends a file mixes."""

    def file(line_ends):
        return (
            "question_id,question"
            + line_ends[0]
            + "".join(
                f"{_csv_cell(q)},{_csv_cell(a)}{end}"
                for (q, a), end in zip(rows, line_ends[1:], strict=False)
            )
        ).encode()

    lf = file(["\n"] * 11)
    mixed = file(ends)
    assert outcome(lambda: parse_questions_csv(mixed, filename="q")) == outcome(
        lambda: parse_questions_csv(lf, filename="q")
    )
    flat_lf, flat_mixed = (
        d.replace(b"question_id,question", b"question_id,answer") for d in (lf, mixed)
    )
    assert outcome(lambda: parse_flat_answers(flat_mixed, filename="q")) == outcome(
        lambda: parse_flat_answers(flat_lf, filename="q")
    )
    tsv_lf = "".join(f"{q}\t1\t{a}\n" for q, a in rows).encode()
    tsv_mixed = "".join(f"{q}\t1\t{a}{end}" for (q, a), end in zip(rows, ends, strict=False))
    assert outcome(lambda: ranking_rows(parse_qa_run(tsv_mixed.encode(), filename="q"))) == outcome(
        lambda: ranking_rows(parse_qa_run(tsv_lf, filename="q"))
    )
