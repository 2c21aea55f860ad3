"""Randomized cross-checks against established implementations:
pytrec_eval (trec_eval) for AP, RR, P@k, R-precision, nDCG, nDCG@k and pyNTCIREVAL for
Q-measure and nDCG on random graded data."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.metrics import evaluate, parse_gains
from evaluation.metrics.judgment_parsers import parse_qrels
from evaluation.metrics.parsers import parse_trec_run

pytrec_eval = pytest.importorskip("pytrec_eval")
ntcir = pytest.importorskip("pyNTCIREVAL.metrics")

DOCS = [f"d{i:02d}" for i in range(25)]


@st.composite
def collections(draw):
    """Random graded qrels (every topic with at least one relevant document) and a run
    with random (often tied) scores."""
    ntopics = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for t in range(ntopics):
        topic = f"t{t}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=20, unique=True))
        grades = draw(st.lists(st.integers(0, 3), min_size=len(judged), max_size=len(judged)))
        if not any(grades):
            grades[0] = draw(st.integers(1, 3))
        qrels[topic] = dict(zip(judged, grades, strict=True))
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=25, unique=True))
        scores = draw(st.lists(st.integers(0, 6), min_size=len(ranked), max_size=len(ranked)))
        run[topic] = {d: float(s) for d, s in zip(ranked, scores, strict=True)}
    return qrels, run


def ours(qrels, run, metrics, **kw):
    qtext = "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items())
    rtext = "".join(f"{t} Q0 {d} 0 {s} tag\n" for t, docs in run.items() for d, s in docs.items())
    j = parse_qrels(qtext.encode(), filename="qrels")
    r = parse_trec_run(rtext.encode(), filename="run")
    return evaluate(j, [r], metrics, **kw).per_question["tag"]


TREC_MAP = {
    "map": "ap",
    "recip_rank": "rr",
    "Rprec": "r_prec",
    "ndcg": "ndcg",
    "P_5": "p@5",
    "P_10": "p@10",
    "ndcg_cut_5": "ndcg@5",
    "ndcg_cut_10": "ndcg@10",
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_agrees_with_pytrec_eval(data):
    qrels, run = data
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "recip_rank", "Rprec", "ndcg", "P", "ndcg_cut"}
    ).evaluate(run)
    mine = ours(qrels, run, sorted(set(TREC_MAP.values())))
    assert sorted(theirs) == sorted(mine.index) == sorted(qrels)  # every topic compared
    for topic, values in theirs.items():
        for trec, name in TREC_MAP.items():
            assert mine.loc[topic, name] == pytest.approx(values[trec], abs=1e-9), (topic, trec)


def ntcir_ranked(qrels, run, topic):
    # trec_eval's order: score descending, then docno descending
    ranked = sorted(run[topic].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return [(d, qrels[topic].get(d)) for d, _ in ranked]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([0.1, 1.0, 3.0]), st.sampled_from([None, 3, 10]))
def test_agrees_with_pyntcireval(data, beta, cutoff):
    qrels, run = data
    metrics = ["q_measure", "ndcg" if cutoff is None else f"ndcg@{cutoff}"]
    mine = ours(qrels, run, metrics, beta=beta)
    for topic in qrels:
        xrelnum = [0, 0, 0, 0]
        for g in qrels[topic].values():
            xrelnum[g] += 1
        ranked = ntcir_ranked(qrels, run, topic)
        q = ntcir.QMeasure(xrelnum, [1, 2, 3], beta).compute(ranked)
        nd = ntcir.MSnDCG(xrelnum, [1, 2, 3], cutoff).compute(ranked)
        assert mine.loc[topic, "q_measure"] == pytest.approx(q, abs=1e-9), topic
        assert mine.loc[topic, metrics[1]] == pytest.approx(nd, abs=1e-9), topic


@settings(max_examples=100, deadline=None)
@given(collections())
def test_pyntcireval_with_custom_gains(data):
    qrels, run = data
    mine = ours(qrels, run, ["q_measure"], gains=parse_gains("10:5:1"))
    for topic in qrels:
        xrelnum = [0, 0, 0, 0]
        for g in qrels[topic].values():
            xrelnum[g] += 1
        # qrels levels are the grades present, highest first; 10:5:1 maps onto them
        present = sorted(
            {g for g in qrels[topic].values() if g}
            | {g for t in qrels for g in qrels[t].values() if g},
            reverse=True,
        )
        gain_of = dict(zip(present, [10.0, 5.0, 1.0], strict=False))
        grades = [gain_of.get(level, 0.0) for level in (1, 2, 3)]
        q = ntcir.QMeasure(xrelnum, grades, 1.0).compute(ntcir_ranked(qrels, run, topic))
        assert mine.loc[topic, "q_measure"] == pytest.approx(q, abs=1e-9), topic
