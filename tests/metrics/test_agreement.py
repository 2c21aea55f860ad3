"""Agreement figures (evaluation/metrics/agreement.py) against the libraries of the field
(krippendorff, scikit-learn, scipy) and against cases computed by hand."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evaluation.metrics.agreement import (
    Mark,
    QuestionTable,
    alike,
    alpha_nominal,
    alpha_ordinal,
    cohen_kappa,
    group_sizes,
    grouping_agreement,
    judged_alike,
    kendall_tau,
    pair_agreement,
    pair_agreement_arrays,
    question_figures_two,
    ranking_change,
    reliability_matrix,
    spearman_rho,
    synset_mates,
)

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")
sps = pytest.importorskip("scipy.stats")


def same(x, y):
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-9)


def reference_alike(layers) -> set:
    """The gold rule as DESIGN.md section 9 words it, with sets: the strings every layer
    judged, all incorrect or all correct at one level, with the same synset-mates in the
    whole layers."""
    mates = [synset_mates(la) for la in layers]
    common = [s for s in layers[0] if all(s in la for la in layers)]
    return {
        s
        for s in common
        if all(
            la[s].correct == layers[0][s].correct and la[s].value == layers[0][s].value
            for la in layers
        )
        and all(m.get(s) == mates[0].get(s) for m in mates)
    }


# -- hand-computed cases ----------------------------------------------------------------------
def test_kappa_by_hand():
    # 10 strings: both correct 4, both incorrect 3, a only 2, b only 1
    a = [1] * 4 + [0] * 3 + [1] * 2 + [0]
    b = [1] * 4 + [0] * 3 + [0] * 2 + [1]
    po = 7 / 10
    pe = (6 / 10) * (5 / 10) + (4 / 10) * (5 / 10)
    assert cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))


def test_kappa_edges():
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    assert math.isnan(cohen_kappa([], []))
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)


def test_alpha_nominal_by_hand():
    # Krippendorff (2011), section C: two observers, 10 units, binary data
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert alpha_nominal(np.array([a, b], dtype=float)) == pytest.approx(0.095, abs=5e-4)


def test_alpha_ordinal_example_of_the_package():
    # the reliability data of Krippendorff (2011), section E (4 coders, 12 units, missing)
    n = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
        ]
    )
    assert alpha_nominal(data) == pytest.approx(0.743, abs=5e-4)
    assert alpha_ordinal(data) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    assert alpha_ordinal(data) == pytest.approx(0.815, abs=5e-4)


def test_alpha_edges():
    assert alpha_nominal(np.array([[1.0, 1.0], [1.0, 1.0]])) == 1.0
    assert math.isnan(alpha_nominal(np.array([[1.0, np.nan], [np.nan, 1.0]])))


def test_grouping_by_hand():
    # a: {1,2,3} {4}; b: {1,2} {3,4}
    g = grouping_agreement([0, 0, 0, 1], [0, 0, 1, 1])
    # pairs together: a {12,13,23}, b {12,34}, both {12}
    assert g.pair_precision == pytest.approx(1 / 2)
    assert g.pair_recall == pytest.approx(1 / 3)
    assert g.pair_f1 == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))
    # B-cubed precision (b's groups): items 1,2: 2/2; item 3: 1/2; item 4: 1/2 -> 3/4
    assert g.bcubed_precision == pytest.approx(3 / 4)
    # recall (a's groups): items 1,2: 2/3; item 3: 1/3; item 4: 1/1 -> (2/3+2/3+1/3+1)/4
    assert g.bcubed_recall == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1) / 4)


def test_grouping_all_singletons_agree():
    g = grouping_agreement([1, 2, 3], [7, 8, 9])
    assert (g.pair_precision, g.pair_recall, g.ari, g.bcubed_f1) == (1.0, 1.0, 1.0, 1.0)


def layers_example():
    a = {"x": Mark(1, 3), "y": Mark(1, 2), "z": Mark(None, 0), "w": Mark(2, 1), "v": Mark(2, 1)}
    b = {
        "x": Mark("p", 3),
        "y": Mark("q", 2),
        "z": Mark("p", 1),
        "w": Mark("q", 1),
        "u": Mark(None, 0),
    }
    return a, b


def test_pair_agreement_by_hand():
    a, b = layers_example()
    pa = pair_agreement(a, b, n_values=4)
    assert pa.n_strings == 4  # x y z w (v, u judged in one layer only)
    # judged alike (the gold rule): none -- z differs in correctness, and x, y and w have
    # one level in both layers but other synset-mates (a: x with y, w alone; b: x with z,
    # y with w)
    assert pa.n_agree == 0
    assert np.trace(pa.confusion) == 3  # the same level (or both incorrect): all but z
    assert pa.n_correct_both == 3  # x y w
    assert pa.confusion.tolist() == [[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    # grouping over x y w: a {x,y}{w}; b {x}{y,w}
    assert pa.grouping.pair_precision == 0.0 and pa.grouping.pair_recall == 0.0
    assert pa.kappa == pytest.approx(cohen_kappa([1, 1, 0, 1], [1, 1, 1, 1]))


def test_question_figures_of_three_layers_are_means_over_the_pairs():
    from evaluation.metrics.agreement import question_figures

    a, b = layers_example()
    common = {"x", "y", "z", "w"}
    a, b = ({s: m for s, m in la.items() if s in common} for la in (a, b))
    ab = pair_agreement(a, b)
    f = question_figures([a, a, b])  # pairs: a-a (perfect), a-b, a-b
    assert f.n_strings == 4 and f.n_agree == 0
    assert f.kappa == pytest.approx((1.0 + 2 * ab.kappa) / 3)
    assert f.ari == pytest.approx((1.0 + 2 * ab.grouping.ari) / 3)
    assert f.bcubed_f1 == pytest.approx((1.0 + 2 * ab.grouping.bcubed_f1) / 3)
    assert f.pair_f1 == pytest.approx((1.0 + 2 * ab.grouping.pair_f1) / 3)


# -- against the libraries, on random data ---------------------------------------------------
labels = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(labels)
def test_kappa_matches_sklearn(rows):
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    ours = cohen_kappa(a, b)
    if len(set(a) | set(b)) == 1:
        assert ours == 1.0  # sklearn says nan (0/0); no disagreement was possible
        return
    theirs = metrics.cohen_kappa_score(a, b)
    assert same(ours, theirs)


matrix = st.lists(
    st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=6, max_size=6),
    min_size=2,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(matrix)
def test_alpha_matches_krippendorff(rows):
    data = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    pairable = (~np.isnan(data)).sum(0) >= 2
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    assume(len(values) >= 2)  # the package refuses one value (and raises on none)
    for level, ours in (("nominal", alpha_nominal), ("ordinal", alpha_ordinal)):
        theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert same(ours(data), theirs), level


groupings = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(groupings)
def test_ari_matches_sklearn(rows):
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    g = grouping_agreement(a, b)
    assert g.ari == pytest.approx(metrics.adjusted_rand_score(a, b))
    # pairwise precision/recall as the pair confusion matrix of scikit-learn counts them
    (_, fp), (fn, tp) = metrics.cluster.pair_confusion_matrix(a, b)
    if tp + fp:
        assert g.pair_precision == pytest.approx(tp / (tp + fp))
    if tp + fn:
        assert g.pair_recall == pytest.approx(tp / (tp + fn))


@settings(max_examples=150, deadline=None)
@given(groupings)
def test_bcubed_by_definition(rows):
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    n = len(rows)
    p = (
        sum(
            sum(1 for j in range(n) if b[j] == b[i] and a[j] == a[i])
            / sum(1 for j in range(n) if b[j] == b[i])
            for i in range(n)
        )
        / n
    )
    r = (
        sum(
            sum(1 for j in range(n) if b[j] == b[i] and a[j] == a[i])
            / sum(1 for j in range(n) if a[j] == a[i])
            for i in range(n)
        )
        / n
    )
    g = grouping_agreement(a, b)
    assert g.bcubed_precision == pytest.approx(p)
    assert g.bcubed_recall == pytest.approx(r)
    assert g.bcubed_f1 == pytest.approx(2 * p * r / (p + r))


scores = st.lists(
    st.tuples(st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.8]), st.floats(0, 1, allow_nan=False)),
    min_size=2,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(scores)
def test_rank_correlations_match_scipy(rows):
    x, y = [r[0] for r in rows], [r[1] for r in rows]
    assert same(kendall_tau(x, y), sps.kendalltau(x, y).statistic)
    if len(set(x)) > 1 and len(set(y)) > 1:
        assert same(spearman_rho(x, y), sps.spearmanr(x, y).statistic)


def test_ranking_change():
    a = {"r1": 0.5, "r2": 0.4, "r3": 0.3}
    b = {"r1": 0.45, "r2": 0.5, "r3": 0.1, "r4": 0.9}
    rc = ranking_change(a, b)
    assert rc.n_runs == 3
    assert rc.largest_change_run == "r3" and rc.largest_change == pytest.approx(0.2)
    assert rc.swaps == 1
    assert rc.kendall_tau == pytest.approx(1 / 3)


# -- pooled and several layers ------------------------------------------------------------------
def test_pooled_units_are_question_and_string():
    a, b = layers_example()
    pooled = pair_agreement({"q1": a, "q2": a}, {"q1": b, "q2": a}, pooled=True)
    assert pooled.n_strings == 4 + 5
    # the same group name in two questions is two synsets
    solo = pair_agreement(a, a)
    assert solo.grouping.ari == 1.0 and pooled.n_correct_both == 3 + 4
    assert pooled.grouping.n == 7


def test_reliability_matrix_and_gold_rule():
    a, b = layers_example()
    data = reliability_matrix([a, b], what="correct")
    assert data.shape == (2, 6)
    assert np.isnan(data).sum() == 2
    # z differs in correctness, x, y and w in their synset-mates; v and u are in one layer
    assert judged_alike([a, b]) == set() == reference_alike([a, b])
    assert judged_alike([a, a]) == set(a) == judged_alike([a])
    assert judged_alike([{"s": Mark(None, 0)}, {"s": Mark(None, 0)}]) == {"s"}
    assert judged_alike([{"s": Mark(None, 0)}, {"s": Mark(1, 1)}]) == set()
    assert judged_alike([{"s": Mark(1, 2)}, {"s": Mark(7, 1)}]) == set()  # other level
    assert judged_alike([]) == set()


def test_judged_alike_compares_synset_mates_over_the_whole_layers():
    """s3 was pooled after ann marked her layer done: only bob judged it, in the synset of
    s1 and s2.  s1 and s2 then have other synset-mates in the two layers ({s1, s2} and
    {s1, s2, s3}): not judged alike -- not by the gold step, not by any figure, though
    among the strings both layers judged (s1, s2) the synsets look the same."""
    ann = {"s1": Mark(1, 3), "s2": Mark(1, 3)}
    bob = {"s1": Mark(1, 3), "s2": Mark(1, 3), "s3": Mark(1, 3)}
    assert judged_alike([ann, bob]) == set() == reference_alike([ann, bob])
    assert pair_agreement(ann, bob).n_agree == 0
    from evaluation.metrics.agreement import question_figures, question_figures_two

    assert question_figures([ann, bob]).n_agree == 0
    assert question_figures([ann, bob, bob]).n_agree == 0
    # the arrays of the agreement page: entries of the strings both judged, synset sizes
    # over the whole layers (bob's synset holds 3)
    q, ga, va, gb, vb = [0, 0], [1, 1], [3, 3], [1, 1], [3, 3]
    table = question_figures_two(q, ga, va, gb, vb, 1, size_a=[2, 2], size_b=[3, 3])
    assert table.n_agree.tolist() == [0] and table.n_strings.tolist() == [2]
    assert alike(q, ga, va, gb, vb, size_a=[2, 2], size_b=[3, 3]).tolist() == [False, False]
    assert alike(q, ga, va, gb, vb, size_a=[2, 2], size_b=[2, 2]).tolist() == [True, True]
    # pooled with a question both judged the same way, the pooled count is the sum
    pooled = pair_agreement({"q1": ann, "q2": ann}, {"q1": bob, "q2": ann}, pooled=True)
    assert pooled.n_agree == 2


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(1, 3)),
            st.integers(1, 3),
            st.one_of(st.none(), st.integers(1, 3)),
            st.integers(1, 3),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_question_figures_agree_with_the_numpy_figures(rows):
    from evaluation.metrics.agreement import question_figures

    a = {i: Mark(g, v if g is not None else 0) for i, (g, v, _, _) in enumerate(rows)}
    b = {i: Mark(g, v if g is not None else 0) for i, (_, _, g, v) in enumerate(rows)}
    f = question_figures([a, b])
    pa = pair_agreement(a, b)
    assert f.n_strings == pa.n_strings
    assert same(f.kappa, pa.kappa)
    assert same(f.alpha_nominal, pa.alpha_nominal)
    assert same(f.alpha_ordinal, pa.alpha_ordinal)
    if pa.n_correct_both:
        assert same(f.pair_f1, pa.grouping.pair_f1)
        assert same(f.ari, pa.grouping.ari)
        assert same(f.bcubed_f1, pa.grouping.bcubed_f1)
    else:
        assert math.isnan(f.pair_f1) and math.isnan(f.ari) and math.isnan(f.bcubed_f1)
    assert f.n_agree == len(reference_alike([a, b])) == len(judged_alike([a, b]))
    # one definition of "judged alike" for a question and for a pair of layers
    assert pa.n_agree == f.n_agree


question_rows = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.one_of(st.none(), st.integers(1, 3)),
        st.integers(1, 3),
        st.one_of(st.none(), st.integers(1, 3)),
        st.integers(1, 3),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(question_rows)
def test_vectorized_question_figures(rows):
    from evaluation.metrics.agreement import question_figures, question_figures_two

    q = [r[0] for r in rows]
    ga = [r[1] if r[1] is not None else -1 for r in rows]
    gb = [r[3] if r[3] is not None else -1 for r in rows]
    # every string judged in both layers: the entries are the whole layers
    sizes = {"size_a": group_sizes(q, ga), "size_b": group_sizes(q, gb)}
    table = question_figures_two(
        q,
        ga,
        [r[2] if r[1] is not None else 0 for r in rows],
        gb,
        [r[4] if r[3] is not None else 0 for r in rows],
        4,
        **sizes,
    )
    for qi in range(4):
        mine = [(i, r) for i, r in enumerate(rows) if r[0] == qi]
        a = {i: Mark(r[1], r[2] if r[1] is not None else 0) for i, r in mine}
        b = {i: Mark(r[3], r[4] if r[3] is not None else 0) for i, r in mine}
        f = question_figures([a, b]) if mine else None
        if f is None:
            assert table.n_strings[qi] == 0
            continue
        assert table.n_strings[qi] == f.n_strings
        assert table.n_agree[qi] == f.n_agree
        assert same(float(table.kappa[qi]), f.kappa)
        assert same(float(table.alpha_nominal[qi]), f.alpha_nominal)
        assert same(float(table.alpha_ordinal[qi]), f.alpha_ordinal)
        assert same(float(table.pair_f1[qi]), f.pair_f1)
        assert same(float(table.ari[qi]), f.ari)
        assert same(float(table.bcubed_f1[qi]), f.bcubed_f1)
        # against the libraries: kappa on correctness, ARI on the strings correct in both
        ca = [r[1] is not None for _, r in mine]
        cb = [r[3] is not None for _, r in mine]
        if len(set(ca) | set(cb)) > 1:
            assert same(float(table.kappa[qi]), metrics.cohen_kappa_score(ca, cb))
        both = [r for _, r in mine if r[1] is not None and r[3] is not None]
        if both:
            assert float(table.ari[qi]) == pytest.approx(
                metrics.adjusted_rand_score([r[1] for r in both], [r[3] for r in both])
            )
    # the pooled count of strings judged alike is the sum of the questions'
    pooled = pair_agreement_arrays(
        q,
        ga,
        [r[2] if r[1] is not None else 0 for r in rows],
        gb,
        [r[4] if r[3] is not None else 0 for r in rows],
        **sizes,
    )
    assert pooled.n_agree == int(table.n_agree.sum())


# one layer's judgment of a string: not judged, incorrect, or (synset, level)
one_mark = st.one_of(
    st.just("unjudged"), st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), one_mark, one_mark), min_size=1, max_size=30))
def test_one_rule_of_judged_alike_when_layers_judged_other_strings(rows):
    """Strings judged in one layer only (pooled after the other was done): the count of
    strings judged alike on the agreement page (vectorized, per question and pooled) is
    the number the gold step sends to gold directly (``judged_alike``), and the rule by
    sets."""
    from evaluation.metrics.agreement import question_figures, question_figures_two

    def mark(x):
        return Mark(None, 0) if x is None else Mark(x[0], x[1])

    layers = [
        {
            qi: {
                i: mark(r[1 + side])
                for i, r in enumerate(rows)
                if r[0] == qi and r[1 + side] != "unjudged"
            }
            for qi in range(3)
        }
        for side in (0, 1)
    ]
    # the page's arrays: every string a layer judged, then the entries both judged
    q = np.array([r[0] for r in rows])
    g = [
        np.array(
            [
                -2 if r[1 + side] == "unjudged" else -1 if r[1 + side] is None else r[1 + side][0]
                for r in rows
            ]
        )
        for side in (0, 1)
    ]
    v = [
        np.array([r[1 + side][1] if isinstance(r[1 + side], tuple) else 0 for r in rows])
        for side in (0, 1)
    ]
    n = [group_sizes(q, g[side]) for side in (0, 1)]
    both = (g[0] > -2) & (g[1] > -2)
    table = question_figures_two(
        q[both],
        g[0][both],
        v[0][both],
        g[1][both],
        v[1][both],
        3,
        size_a=n[0][both],
        size_b=n[1][both],
    )
    pooled = pair_agreement_arrays(
        q[both],
        g[0][both],
        v[0][both],
        g[1][both],
        v[1][both],
        size_a=n[0][both],
        size_b=n[1][both],
    )
    total = 0
    for qi in range(3):
        a, b = layers[0][qi], layers[1][qi]
        gold = judged_alike([a, b])
        assert gold == reference_alike([a, b])
        assert table.n_agree[qi] == len(gold) == question_figures([a, b]).n_agree
        assert pair_agreement(a, b).n_agree == len(gold)
        total += len(gold)
    assert pooled.n_agree == total
    assert pair_agreement(layers[0], layers[1], pooled=True).n_agree == total


# -- synset numbers as large as the formats allow (docs/formats.md: up to 999,999,999) ----
HUGE = 999_999_999


def _figures(q, ga, va, gb, vb, n_questions):
    """Every vectorized figure of two layers' aligned arrays, as plain lists."""
    size_a, size_b = group_sizes(q, ga), group_sizes(q, gb)
    table = question_figures_two(q, ga, va, gb, vb, n_questions, size_a=size_a, size_b=size_b)
    pooled = pair_agreement_arrays(q, ga, va, gb, vb, size_a=size_a, size_b=size_b)
    return {
        "size_a": size_a.tolist(),
        "size_b": size_b.tolist(),
        "alike": alike(q, ga, va, gb, vb, size_a=size_a, size_b=size_b).tolist(),
        **{
            f: np.asarray(getattr(table, f), dtype=float).tolist()
            for f in QuestionTable.__dataclass_fields__
        },
        "pooled": (
            pooled.n_strings,
            pooled.n_agree,
            pooled.n_correct_both,
            pooled.kappa,
            pooled.alpha_nominal,
            pooled.alpha_ordinal,
            pooled.grouping,
            pooled.confusion.tolist(),
        ),
    }


def _same_figures(x, y):
    assert x.keys() == y.keys()
    for k in x:
        if k == "pooled":
            assert repr(x[k]) == repr(y[k]), k  # nan compares equal by its repr
        else:
            assert len(x[k]) == len(y[k]) and all(
                (math.isnan(a) and math.isnan(b)) if a != a else a == b
                for a, b in zip(x[k], y[k], strict=True)
            ), k


def test_four_questions_whose_synsets_are_numbered_999999999():
    """The case that gave the Agreement page an OverflowError: the figures are those of
    the same judgments numbered 1."""
    q = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    ga = np.array([HUGE, HUGE, HUGE, -1, HUGE, HUGE, HUGE, HUGE])
    gb = np.array([HUGE, HUGE, HUGE, HUGE, -1, -1, HUGE, HUGE])
    v = np.array([3, 3, 3, 0, 3, 3, 2, 2])
    small = _figures(q, np.where(ga > 0, 1, ga), v, np.where(gb > 0, 1, gb), v, 4)
    _same_figures(_figures(q, ga, v, gb, v, 4), small)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.one_of(st.none(), st.integers(1, 4)),
            st.integers(1, 3),
            st.one_of(st.none(), st.integers(1, 4)),
            st.integers(1, 3),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_huge_synset_numbers_give_the_figures_of_small_ones(rows):
    """Synset numbers are labels: renumbering them (here 1..4 against numbers up to
    999,999,999) changes no figure."""
    big = {1: 1, 2: 2, 3: HUGE - 1, 4: HUGE}

    def arrays(number):
        q = np.array([r[0] for r in rows])
        ga = np.array([number[r[1]] if r[1] else -1 for r in rows])
        gb = np.array([number[r[3]] if r[3] else -1 for r in rows])
        va = np.array([r[2] if r[1] else 0 for r in rows])
        vb = np.array([r[4] if r[3] else 0 for r in rows])
        return q, ga, va, gb, vb, 4

    _same_figures(_figures(*arrays(big)), _figures(*arrays({n: n for n in big})))
