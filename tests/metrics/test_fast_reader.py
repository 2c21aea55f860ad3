"""The C reader gives exactly what the Python parsers give, or steps aside."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import BASE_METRICS, evaluate
from evaluation.metrics.fast import available, read_inputs
from evaluation.metrics.parsers import parse_judgments_csv, parse_qrels, parse_run

pytestmark = pytest.mark.skipif(not available(), reason="the C reader was not built "
                                "(no C compiler at install time); the pandas reader is used")
METRICS = [*BASE_METRICS, "p@5", "ndcg@10"]


def both(qrels: bytes | None, runs: list[tuple[str, bytes]], judgments_csv: bytes | None = None):
    if qrels is not None:
        fast = read_inputs(qrels=qrels, runs=runs)
        slow_j = parse_qrels(qrels, filename="q")
    else:
        slow_j = parse_judgments_csv(judgments_csv, filename="j")
        fast = read_inputs(qrels=None, judgments=slow_j, runs=runs)
    slow_r = [parse_run(data, filename=name) for name, data in runs]
    return fast, slow_j, slow_r


def same_scores(fast, slow_j, slow_r):
    assert fast is not None
    fj, fr = fast
    a = evaluate(fj, fr, METRICS)
    b = evaluate(slow_j, slow_r, METRICS)
    assert a.runs == b.runs
    for name in a.runs:
        pa, pb = a.per_question[name], b.per_question[name]
        assert list(pa.index) == list(pb.index)
        np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), atol=1e-12)
    fa, fb = a.marked.frame(), b.marked.frame()
    assert fa.equals(fb)


@pytest.mark.parametrize(("qrels", "run"), [("qrels.test", "results.test"),
                                            ("qrels.test.with-comments", "results.trunc"),
                                            ("qrels.rel_level", "results.test"),
                                            ("qrels.comment.test", "results.comment.test")])
def test_trec_eval_files(trec_data, qrels, run):
    runs = [(run, (trec_data / run).read_bytes())]
    same_scores(*both((trec_data / qrels).read_bytes(), runs))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from("abcdefgh"),
                          st.integers(-1, 3)), min_size=1, max_size=20,
                unique_by=lambda t: (t[0], t[1])),
       st.lists(st.tuples(st.sampled_from(["1", "2", "4"]), st.sampled_from("abcdefghij"),
                          st.integers(0, 3)), min_size=1, max_size=25,
                unique_by=lambda t: (t[0], t[1])),
       st.sampled_from([" ", "\t", "  "]))
def test_random_trec(qrels, run, sep):
    qtext = "".join(f"{q}{sep}0{sep}{d}{sep}{g}\n" for q, d, g in qrels).encode()
    rtext = "".join(f"{q} Q0 {d} 0 {s / 2} tag\n" for q, d, s in run).encode()
    same_scores(*both(qtext, [("r", rtext)]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Q1", "Q2", "Q3"]), st.integers(1, 5),
                          st.sampled_from(["Paul", "paul", "John Lennon", "NIL", "千葉県",
                                           "ＣＨＩＢＡ", "x", "Ringo"])),
                min_size=1, max_size=15, unique_by=lambda t: (t[0], t[1])))
def test_random_qa(rows):
    judgments = ("question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,John Lennon,A\n"
                 "Q2,1,NIL,A\nQ3,1,Chiba,S\nQ3,1,千葉県,A\nQ3,,x,\n").encode()
    body = "".join(f"{q}\t{r}\t{a}\n" for q, r, a in rows).encode()
    same_scores(*both(None, [("run.tsv", body), ("other.tsv", body)], judgments))


@pytest.mark.parametrize("body", [
    b"Q1\t1\t Paul\n",            # padded field: the Python reader strips it
    b"Q1\t1\tPaul\nQ1\t1\tJohn\n",  # duplicate rank: the Python reader reports it
    b"question_id,rank,answer\nQ1,1,Paul\n",
    b"Q1\t1\tPaul\xa0McCartney\n",   # not UTF-8
    b"Q1\t1\tPaul\xc2\xa0McCartney\n",  # a no-break space
    b"Q1\t1e0\tPaul\n",
])
def test_irregular_files_step_aside(body):
    j = parse_judgments_csv(b"question_id,synset_id,answer,level\nQ1,1,Paul,S\n")
    assert read_inputs(qrels=None, judgments=j, runs=[("r.tsv", body)]) is None
