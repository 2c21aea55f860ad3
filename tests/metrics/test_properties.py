"""Properties from the papers, checked on random QA judgments and runs."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import BASE_METRICS, Judgments, Ranking, evaluate, parse_gains

ALL = [*BASE_METRICS, "p@1", "p@3", "ndcg@3"]
LEVELS = ("S", "A", "B")


@st.composite
def qa_case(draw):
    """One question: synsets of 1-3 strings with random levels, some incorrect strings,
    maybe a NIL synset; a ranking drawn from its strings, wrong answers and NIL."""
    nil_question = draw(st.booleans()) and draw(st.booleans())
    rows = []
    if nil_question:
        rows.append(("q", "1", "NIL", draw(st.sampled_from(LEVELS))))
    else:
        for s in range(draw(st.integers(0, 5))):
            for k in range(draw(st.integers(1, 3))):
                rows.append(("q", str(s), f"a{s}_{k}", draw(st.sampled_from(LEVELS))))
    for w in range(draw(st.integers(0 if rows else 1, 2))):
        rows.append(("q", None, f"wrong{w}", None))
    pool = [r[2] for r in rows] + ["NIL", "unknown1", "unknown2"]
    ranking = draw(st.lists(st.sampled_from(pool), max_size=8, unique=True))
    return rows, ranking


def run_scores(rows, ranking, **kw):
    j = Judgments.from_rows(rows)
    return evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ALL, **kw).per_question["r"]


@settings(max_examples=400, deadline=None)
@given(qa_case(), st.sampled_from(["3:2:1", "1:1:1", "10:5:1", "adjusted"]),
       st.sampled_from([0.5, 1.0, 5.0]))
def test_every_metric_in_unit_interval(case, gains, beta):
    rows, ranking = case
    s = run_scores(rows, ranking, gains=parse_gains(gains), beta=beta)
    values = s.to_numpy()
    assert np.all(values >= -1e-12) and np.all(values <= 1 + 1e-12), s.T


@settings(max_examples=400, deadline=None)
@given(qa_case(), st.data())
def test_a_duplicate_never_raises_a_score(case, data):
    rows, ranking = case
    in_synset = [(r[1], r[2]) for r in rows if r[1] is not None]
    if not in_synset or not ranking:
        return
    base = run_scores(rows, ranking)
    # insert a string of an already-credited synset right after its first credit
    j = Judgments.from_rows(rows)
    marked = evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ["rr"]).marked.frame()
    credited = marked[marked["status"] == "correct"]
    if credited.empty:
        return
    pick = data.draw(st.sampled_from(list(credited.itertuples())))
    sibling = [t for s, t in in_synset if s == pick.synset and t not in ranking]
    if not sibling:
        return
    longer = list(ranking)
    longer.insert(int(pick.rank), sibling[0])
    after = run_scores(rows, longer)
    for metric in ALL:
        assert after.loc["q", metric] <= base.loc["q", metric] + 1e-12, metric


@settings(max_examples=300, deadline=None)
@given(qa_case(), st.integers(1, 5))
def test_nil_below_rank_1_earns_nothing(case, position):
    rows, ranking = case
    ranking = [a for a in ranking if a != "NIL"]
    without = run_scores(rows, ranking)
    ranking.insert(min(position, len(ranking)), "NIL")
    if ranking[0] == "NIL":
        return
    with_nil = run_scores(rows, ranking)
    for metric in ("q_measure", "r_measure", "rr", "ap", "awp", "rwp", "r_prec", "ndcg", "rbp"):
        assert with_nil.loc["q", metric] <= without.loc["q", metric] + 1e-12


@settings(max_examples=400, deadline=None)
@given(qa_case(), st.sampled_from(["3:2:1", "10:5:1", "1:1:1"]), st.integers(0, 3))
def test_q_measure_is_1_iff_ideal_output(case, gains, extra_wrong):
    rows, _ = case
    j = Judgments.from_rows(rows)
    synsets = {}
    for _, s, text, level in rows:
        if s is not None:
            synsets.setdefault(s, []).append((LEVELS.index(level), text))
    if not synsets:
        return
    profile = parse_gains(gains)
    base = dict(zip(LEVELS, profile.values, strict=True))
    # ideal: each synset once, by its best string, gains descending; wrong answers after R
    best = sorted((min(v) for v in synsets.values()), key=lambda lv_t: -base[LEVELS[lv_t[0]]])
    ideal = [t for _, t in best] + [f"wrong{w}" for w in range(extra_wrong)]
    s = evaluate(j, [Ranking.from_lists("r", {"q": ideal})], ["q_measure"], gains=profile)
    assert abs(s.per_question["r"].loc["q", "q_measure"] - 1.0) < 1e-12
    # any non-ideal permutation (a wrong answer moved into the top R) scores below 1
    if len(ideal) > 1:
        worse = ["zzz-wrong", *ideal]
        s2 = evaluate(j, [Ranking.from_lists("r", {"q": worse})], ["q_measure"], gains=profile)
        assert s2.per_question["r"].loc["q", "q_measure"] < 1.0


@settings(max_examples=400, deadline=None)
@given(qa_case())
def test_q_measure_1_only_for_an_ideal_output(case):
    rows, ranking = case
    j = Judgments.from_rows(rows)
    s = evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ["q_measure"])
    if s.per_question["r"].loc["q", "q_measure"] < 1.0 - 1e-12:
        return
    marks = s.marked.frame()
    r = int(j.synset_counts()[0])
    top = marks.head(r)
    assert len(top) == r and (top["status"] == "correct").all()
    gains = {"S": 3, "A": 2, "B": 1}
    got = [gains[lv] for lv in top["level"]]
    xmax = sorted((gains[LEVELS[x]] for x in j.syn_xmax), reverse=True)
    assert got == xmax
