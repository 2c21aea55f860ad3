"""Agreement figures (evaluation/metrics/agreement.py) against the libraries of the field
(krippendorff, scikit-learn, scipy) and against cases computed by hand."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evaluation.metrics.agreement import (
    Mark,
    alpha_nominal,
    alpha_ordinal,
    cohen_kappa,
    grouping_agreement,
    kendall_tau,
    pair_agreement,
    pair_agreement_arrays,
    ranking_change,
    reliability_matrix,
    spearman_rho,
    string_agrees,
    synset_mates,
)

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")
sps = pytest.importorskip("scipy.stats")


def same(x, y):
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-9)


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
    ma, mb = synset_mates(a), synset_mates(b)
    assert string_agrees([a["z"], b["z"]]) is False
    assert string_agrees([a["w"], b["w"]], [ma["w"], mb["w"]]) is False  # mates differ
    assert string_agrees([a["x"], a["x"]], [ma["x"], ma["x"]]) is True
    assert string_agrees([Mark(None, 0), Mark(None, 0)]) is True


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
    ma, mb = synset_mates(a), synset_mates(b)
    assert f.n_agree == sum(
        string_agrees([a[s], b[s]], [ma.get(s, frozenset()), mb.get(s, frozenset())]) for s in a
    )
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

    table = question_figures_two(
        [r[0] for r in rows],
        [r[1] if r[1] is not None else -1 for r in rows],
        [r[2] if r[1] is not None else 0 for r in rows],
        [r[3] if r[3] is not None else -1 for r in rows],
        [r[4] if r[3] is not None else 0 for r in rows],
        4,
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
        [r[0] for r in rows],
        [r[1] if r[1] is not None else -1 for r in rows],
        [r[2] if r[1] is not None else 0 for r in rows],
        [r[3] if r[3] is not None else -1 for r in rows],
        [r[4] if r[3] is not None else 0 for r in rows],
    )
    assert pooled.n_agree == int(table.n_agree.sum())
