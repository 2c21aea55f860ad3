"""Fuzzing every parser: whatever the bytes, a parser returns data or raises InputError
with located issues -- never another exception.  ``make test`` runs a small sample;
``make fuzz`` (FUZZ_EXAMPLES, default 12,500 per test: over 100,000 inputs in all) runs
the long campaign."""

import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from evaluation.metrics import InputError, evaluate
from evaluation.metrics.fast import read_inputs
from evaluation.metrics.parsers import (
    parse_flat_answers,
    parse_judgments_csv,
    parse_qa_run,
    parse_qrels,
    parse_questions_csv,
    parse_run,
    parse_trec_run,
)

LONG = os.environ.get("FUZZ_EXAMPLES")
EXAMPLES = int(LONG) if LONG else 150
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

PARSERS = [parse_flat_answers, parse_judgments_csv, parse_qa_run, parse_qrels,
           parse_questions_csv, parse_run, parse_trec_run]

# pieces that make inputs look almost right
CELLS = st.one_of(
    st.sampled_from(["Q1", "Q2", "1", "0", "-1", "2", "S", "A", "B", "X", "NIL", "Paul",
                     "=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "", " ", "Q0", "1e3", "nan",
                     "inf", "0x10", "1_0", "٣", "ＳＩＸ", "\u00a0", "\u3000", "a\x00b", '"',
                     "a,b", "#", "question_id", "synset_id", "answer", "level", "rank",
                     "score", "question"]),
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
        header = draw(st.sampled_from(["question_id,synset_id,answer,level",
                                       "question_id,question", "question_id,answer",
                                       "question_id,rank,answer,score", "#comment"]))
        text = header + "\n" + text
    if draw(st.integers(0, 20)) == 0:
        text += "x" * draw(st.sampled_from([70000, 200]))  # a huge line
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp932"]))
    return text.encode(encoding, errors="replace")


@st.composite
def trec_files(draw, kind: str) -> bytes:
    """A well-formed qrels or TREC run (a docno once per topic), or, in a third of the
    draws, one with an almost-right line put in somewhere."""
    docs = st.sampled_from(["d1", "d2", "d3", "D-4", "doc:5", "NIL"])
    pairs = draw(st.lists(st.tuples(st.sampled_from(["Q1", "Q2", "3"]), docs), min_size=1,
                          max_size=12, unique=True))
    sep, end = draw(st.sampled_from([" ", "\t", "  "])), draw(st.sampled_from(["\n", "\r\n"]))
    if kind == "qrels":
        lines = [sep.join([q, "0", d, str(draw(st.integers(-1, 3)))]) for q, d in pairs]
    else:
        lines = [sep.join([q, "Q0", d, str(k + 1),
                           repr(draw(st.floats(-5, 5, allow_nan=False))), "tag"])
                 for k, (q, d) in enumerate(pairs)]
    if draw(st.sampled_from([False, False, True])):
        lines.insert(draw(st.integers(0, len(lines))), sep.join(draw(st.lists(CELLS,
                                                                               max_size=7))))
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
@given(run=st.sampled_from([1, 1, 1, 0]).flatmap(
           lambda k: trec_files("run") if k else almost_files()),
       qrels=st.sampled_from([1, 1, 1, 0]).flatmap(
           lambda k: trec_files("qrels") if k else almost_files()))
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
