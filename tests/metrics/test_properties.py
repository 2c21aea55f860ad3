"""Properties from the papers, checked on random QA judgments and runs."""

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from evaluation.metrics import BASE_METRICS, Judgments, Ranking, evaluate, parse_gains

ALL = [*BASE_METRICS, "p@1", "p@3", "ndcg@3"]
LEVELS = ("S", "A", "B")


@st.composite
def qa_case(draw, *, min_answers: int = 0, two_string_synset: bool = False):
    """One question: synsets of 1-3 strings with random levels, some incorrect strings,
    maybe a NIL synset; a ranking of ``min_answers``-8 answers drawn from its strings, wrong
    answers and NIL.  ``two_string_synset``: no NIL question, and synset 0 has 2-3 strings."""
    nil_question = not two_string_synset and draw(st.booleans()) and draw(st.booleans())
    rows = []
    if nil_question:
        rows.append(("q", "1", "NIL", draw(st.sampled_from(LEVELS))))
    else:
        for s in range(draw(st.integers(int(two_string_synset), 5))):
            size = st.integers(2 if two_string_synset and s == 0 else 1, 3)
            for k in range(draw(size)):
                rows.append(("q", str(s), f"a{s}_{k}", draw(st.sampled_from(LEVELS))))
    for w in range(draw(st.integers(0 if rows else 1, 2))):
        rows.append(("q", None, f"wrong{w}", None))
    pool = list(dict.fromkeys([r[2] for r in rows] + ["NIL", "unknown1", "unknown2"]))
    size = draw(st.integers(min_answers, min(8, len(pool))))
    return rows, draw(st.permutations(pool))[:size]


def run_scores(rows, ranking, **kw):
    j = Judgments.from_rows(rows)
    return evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ALL, **kw).per_question["r"]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    qa_case(),
    st.sampled_from(["3:2:1", "1:1:1", "10:5:1", "adjusted"]),
    st.sampled_from([0.5, 1.0, 5.0]),
)
def test_every_metric_in_unit_interval(case, gains, beta):
    rows, ranking = case
    s = run_scores(rows, ranking, gains=parse_gains(gains), beta=beta)
    values = s.to_numpy()
    assert np.all(values >= -1e-12) and np.all(values <= 1 + 1e-12), s.T


def synsets_of(rows) -> dict[str, list[tuple[int, str]]]:
    """synset id -> [(level index, string)] of a case's rows."""
    synsets: dict[str, list[tuple[int, str]]] = {}
    for _, s, text, level in rows:
        if s is not None:
            synsets.setdefault(s, []).append((LEVELS.index(level), text))
    return synsets


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(qa_case(two_string_synset=True), st.data())
def test_a_duplicate_never_raises_a_score(case, data):
    rows, ranking = case
    # a synset with two strings: one in the ranking (credited there), one left to insert
    groups = {s: [t for _, t in v] for s, v in synsets_of(rows).items() if len(v) > 1}
    synset = data.draw(st.sampled_from(sorted(groups)))
    strings = groups[synset]
    ranking = list(ranking)
    if not any(t in ranking for t in strings):
        ranking.insert(data.draw(st.integers(0, len(ranking))), data.draw(st.sampled_from(strings)))
    sibling = [t for t in strings if t not in ranking]
    assume(sibling)
    base = run_scores(rows, ranking)
    # insert the sibling right after the synset's credited string
    j = Judgments.from_rows(rows)
    marked = evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ["rr"]).marked.frame()
    credited = marked[(marked["status"] == "correct") & (marked["synset"] == synset)]
    assert len(credited) == 1, marked
    longer = list(ranking)
    longer.insert(int(credited["rank"].iloc[0]), data.draw(st.sampled_from(sibling)))
    after = run_scores(rows, longer)
    for metric in ALL:
        assert after.loc["q", metric] <= base.loc["q", metric] + 1e-12, metric


@settings(max_examples=300, deadline=None)
@given(qa_case(min_answers=1), st.integers(1, 5))
def test_nil_below_rank_1_earns_nothing(case, position):
    rows, ranking = case
    ranking = [a for a in ranking if a != "NIL"]
    assume(ranking)  # NIL then lands below rank 1
    without = run_scores(rows, ranking)
    ranking.insert(min(position, len(ranking)), "NIL")
    with_nil = run_scores(rows, ranking)
    for metric in ("q_measure", "r_measure", "rr", "ap", "awp", "rwp", "r_prec", "ndcg", "rbp"):
        assert with_nil.loc["q", metric] <= without.loc["q", metric] + 1e-12


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(qa_case(), st.sampled_from(["3:2:1", "10:5:1", "1:1:1"]), st.integers(0, 3))
def test_q_measure_is_1_iff_ideal_output(case, gains, extra_wrong):
    rows, _ = case
    j = Judgments.from_rows(rows)
    synsets = synsets_of(rows)
    assume(synsets)
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


GAIN = {"S": 3, "A": 2, "B": 1}  # the default profile, 3:2:1


@st.composite
def near_ideal_case(draw):
    """A case whose ranking is, half the time, an ideal output (each synset once, by a
    string at its best level, best synsets first, maybe noise after rank R) put through
    0-2 random edits, most of which spoil it: ideal and non-ideal outputs both occur."""
    rows, ranking = draw(qa_case())
    synsets = synsets_of(rows)
    if synsets and draw(st.booleans()):
        order = draw(st.permutations(sorted(synsets)))
        order = sorted(order, key=lambda s: min(synsets[s])[0])  # stable: ties stay shuffled
        ranking = [
            draw(st.sampled_from([t for lv, t in synsets[s] if lv == min(synsets[s])[0]]))
            for s in order
        ]
        every = [r[2] for r in rows] + ["NIL", "unknown1"]
        ranking += draw(st.lists(st.sampled_from(every), max_size=2))
        for _ in range(draw(st.integers(0, 2))):
            op = draw(st.sampled_from(["swap", "replace", "insert", "drop"]))
            k = draw(st.integers(0, len(ranking) - 1))
            if op == "swap" and k + 1 < len(ranking):
                ranking[k], ranking[k + 1] = ranking[k + 1], ranking[k]
            elif op == "replace":
                ranking[k] = draw(st.sampled_from(every))
            elif op == "insert":
                ranking.insert(k, draw(st.sampled_from(every)))
            elif op == "drop" and len(ranking) > 1:
                del ranking[k]
    return rows, ranking


def is_ideal(rows, ranking) -> bool:
    """Worked out from the rows, not from the engine: the top R answers are strings of the
    R different synsets, with gains in the ideal (descending) order."""
    synsets = synsets_of(rows)
    level_of = {t: (s, LEVELS[lv]) for s, v in synsets.items() for lv, t in v}
    R = len(synsets)
    if R == 0 or len(ranking) < R:
        return False
    top = [level_of.get(a) for a in ranking[:R]]
    if None in top or len({s for s, _ in top}) < R:
        return False
    ideal = sorted((GAIN[LEVELS[min(v)[0]]] for v in synsets.values()), reverse=True)
    return [GAIN[lv] for _, lv in top] == ideal


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(near_ideal_case())
def test_q_measure_is_1_exactly_for_an_ideal_output(case):
    rows, ranking = case
    j = Judgments.from_rows(rows)
    s = evaluate(j, [Ranking.from_lists("r", {"q": ranking})], ["q_measure"])
    q = s.per_question["r"].loc["q", "q_measure"]
    ideal = is_ideal(rows, ranking)
    event("ideal" if ideal else "not ideal")
    assert (abs(q - 1.0) < 1e-12) == ideal, (ranking, q)
    if ideal:  # and the marks say why: R credited strings, gains in the ideal order
        top = s.marked.frame().head(int(j.synset_counts()[0]))
        assert (top["status"] == "correct").all()
        assert [GAIN[lv] for lv in top["level"]] == sorted(
            (GAIN[LEVELS[x]] for x in j.syn_xmax), reverse=True
        )
