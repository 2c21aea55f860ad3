"""An empty matching key never matches anything (DESIGN.md section 4): "?", "the" or "..."
key to "" (under ``squad`` articles and punctuation go, under ``normalized`` edge
punctuation), and so does a judged "A" under ``squad``; were "" a key like any other, junk
would be credited with the judged string's synset.  Both marking paths: Python (any mode)
and the C accelerator's keyed matching (``normalized``, files read by the fast reader);
CI runs this file with and without QASYNSET_NO_ACCEL."""

import pytest

from evaluation.metrics import InputError, Judgments, evaluate, fast
from evaluation.metrics.judgment_parsers import parse_judgments_csv
from evaluation.metrics.normalize import normalize_answer
from evaluation.metrics.parsers import parse_qa_run

from .helpers import judgments, score

JUNK = ["?", "the", "...", "a", "An", " - "]


@pytest.mark.parametrize("junk", JUNK)
def test_squad_junk_does_not_match_a_judged_string_whose_key_is_empty(junk):
    assert normalize_answer(junk, "squad") == normalize_answer("A", "squad") == ""
    j = judgments({"Q1": [("1", "A", "S"), ("2", "Paul", "S")]}, match="squad")
    assert score(j, {"Q1": [junk, "paul"]}, ["rr"])["Q1"]["rr"] == 0.5
    # nor the judged "A" itself: its key is empty too
    assert score(j, {"Q1": ["A", "paul"]}, ["rr"])["Q1"]["rr"] == 0.5


def test_two_judged_strings_with_empty_keys_are_not_spellings_of_one():
    """Judged differently, "A" and "The" would be a conflict if "" were a key; they are two
    strings that nothing matches."""
    j = judgments({"Q1": [("1", "A", "S"), (None, "The", None), ("2", "x", "S")]}, match="squad")
    assert list(j.str_text) == ["A", "The", "x"]
    assert score(j, {"Q1": ["...", "x"]}, ["rr"])["Q1"]["rr"] == 0.5


@pytest.mark.parametrize("junk", ["?!", "...", " ; "])
def test_normalized_junk_does_not_match_a_judged_string_whose_key_is_empty(junk):
    j = judgments({"Q1": [("1", "…", "S"), ("2", "Paul", "S")]})
    assert normalize_answer(junk) == normalize_answer("…") == ""
    assert score(j, {"Q1": [junk, "paul"]}, ["rr"])["Q1"]["rr"] == 0.5


JUDGED = b"question_id,synset_id,answer,level\nQ1,1,...,S\nQ1,2,Paul,S\nQ2,1,A,S\n"
RUN = "Q1\t1\t?!\nQ1\t2\tpaul\nQ2\t1\tthe\nQ2\t2\t\u3002\n".encode()


@pytest.mark.parametrize("match", ["normalized", "squad"])
def test_files_read_by_the_fast_reader_match_the_same(match):
    """qa-score's path: the run read by the C reader (when built) and matched in C under
    ``normalized``; the Python readers and matcher otherwise.  Same scores either way.
    A judgments file refuses a judged answer whose key is empty
    (tests/test_empty_key_judgments.py): judgments built in memory may still hold one."""
    with pytest.raises(InputError, match="empty matching key"):
        parse_judgments_csv(JUDGED, match=match)
    j = Judgments.from_rows(
        [("Q1", "1", "...", "S"), ("Q1", "2", "Paul", "S"), ("Q2", "1", "A", "S")], match=match
    )
    read = fast.read_inputs(qrels=None, judgments=j, runs=[("r.tsv", RUN)])
    runs = read[1] if read is not None else [parse_qa_run(RUN, filename="r.tsv")]
    if fast.available():
        assert read is not None
    plain = evaluate(j, [parse_qa_run(RUN, filename="r.tsv")], ["rr"]).per_question["r"]
    got = evaluate(j, runs, ["rr"]).per_question["r"]
    assert got["rr"].to_dict() == plain["rr"].to_dict()
    assert got.at["Q1", "rr"] == 0.5  # "?!" matches nothing, "paul" is credited
    if match == "squad":
        assert got.at["Q2", "rr"] == 0.0  # "the" and "。" are no "A"
