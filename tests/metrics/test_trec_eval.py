"""Agreement with trec_eval's own test suite (tests/data/trec_eval, see its README.txt):
per-topic values to 4 decimals on every measure both tools have."""

import re

import pytest

from evaluation.metrics import evaluate
from evaluation.metrics.judgment_parsers import parse_qrels
from evaluation.metrics.parsers import parse_run

MEASURE = re.compile(r"^(map|recip_rank|Rprec|ndcg|P_(\d+)|ndcg_cut_(\d+))$")


def our_name(trec: str) -> str | None:
    m = MEASURE.match(trec)
    if not m:
        return None
    if m.group(2):
        return f"p@{m.group(2)}"
    if m.group(3):
        return f"ndcg@{m.group(3)}"
    return {"map": "ap", "recip_rank": "rr", "Rprec": "r_prec", "ndcg": "ndcg"}[trec]


def expected(path, only=None):
    """{(metric, topic): value} for the measures we share with trec_eval."""
    out = {}
    for line in path.read_text().splitlines():
        name, topic, value = (f.strip() for f in line.split("\t"))
        ours = our_name(name)
        if ours and (only is None or name in only or ours in only):
            out[ours, topic] = float(value)
    return out


def check(trec_data, qrels, run, out, only=None):
    j = parse_qrels((trec_data / qrels).read_bytes(), filename=qrels)
    r = parse_run((trec_data / run).read_bytes(), filename=run)
    want = expected(trec_data / out, only)
    metrics = sorted({m for m, _ in want})
    s = evaluate(j, [r], metrics)
    pq, means = s.per_question[r.name], s.means().loc[r.name]
    assert want, "no shared measures found"
    wrong = []
    for (metric, topic), value in want.items():
        got = means[metric] if topic == "all" else pq.loc[topic, metric]
        if round(got, 4) != pytest.approx(value, abs=1e-9):
            wrong.append((metric, topic, value, round(got, 4)))
    assert not wrong, wrong
    return len(want)


def test_out_test_aq_per_topic(trec_data):
    n = check(trec_data, "qrels.test", "results.test", "out.test.aq")
    assert n > 80


def test_out_test_means(trec_data):
    check(trec_data, "qrels.test", "results.test", "out.test")


def test_out_test_with_comment_lines_in_qrels(trec_data):
    check(trec_data, "qrels.test.with-comments", "results.test", "out.test")


def test_out_test_aqc_truncated_run_complete_topics(trec_data):
    # -c: topic 302 is absent from results.trunc and scores as an empty ranking
    n = check(trec_data, "qrels.test", "results.trunc", "out.test.aqc")
    assert n > 80


def test_out_comment_test_graded_msmarco_ids(trec_data):
    check(trec_data, "qrels.comment.test", "results.comment.test", "out.comment.test")


def test_out_test_aql_graded_ndcg(trec_data):
    # -l2 changes what the binary measures count as relevant, not the ndcg gains
    check(
        trec_data,
        "qrels.rel_level",
        "results.test",
        "out.test.aql",
        only={"ndcg"} | {f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    )


def test_meas_params_precision_cutoffs(trec_data):
    check(
        trec_data, "qrels.test", "results.test", "out.test.meas_params", only={"P_3", "P_5", "P_7"}
    )
