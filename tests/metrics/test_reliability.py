"""Reliability engine (the package evaluation/metrics/reliability/): hand-counted cases,
properties, and the bootstrap / Tukey p-values against straightforward loops."""

import dataclasses
import io
import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.metrics.csvio import read_csv
from evaluation.metrics.reliability.bootstrap import bootstrap_asl
from evaluation.metrics.reliability.comparisons import (
    bootstrap_intervals,
    draw_permutations,
    holm,
    kendall_tau,
    mean_intervals,
    paired_t,
    t_intervals,
    tukey_generator,
    tukey_hsd,
)
from evaluation.metrics.reliability.figures import metric_reliability, reliability_report
from evaluation.metrics.reliability.pairs import run_pairs
from evaluation.metrics.reliability.samples import Samples, draw_bootstrap, draw_samples
from evaluation.metrics.reliability.samples_csv import (
    read_samples,
    samples_from_csv,
    samples_to_csv,
    samples_to_npz,
)
from evaluation.metrics.reliability.stability import stability
from evaluation.metrics.reliability.swaps import difference_bin, swap_rates
from evaluation.metrics.reliability.tables import TABLES, curves_csv, pairs_csv, summary_csv

# Three runs, eight questions; C is A again (every difference A-C is zero).  Values are
# binary fractions and subsets have 2 questions, so every mean and margin is exact.
A = [0.5, 0.5, 0.25, 0, 1, 0.5, 0, 0]
B = [0.5, 0.25, 0.25, 0, 0.75, 0.5, 0, 0.5]
X3 = np.array([A, B, A], dtype=float)


# -- stability, counted by hand -------------------------------------------------------------
def test_stability_counts_by_hand():
    # means (A, B, C): {0,1}: .5 .375 .5; {2,3}: .125 .125 .125; {4,7}: .5 .625 .5
    subsets = np.array([[0, 1], [2, 3], [4, 7]])
    s = stability(X3, subsets, fuzziness=[0, 0.25, 0.5])
    # pairs (A,B), (A,C), (B,C); columns f = 0, 0.25, 0.5
    # (A,B): trial 0 d=.125 margin .5: f=.25 gives margin .125 -- not < , so not a tie
    #        trial 1 d=0: a tie at every f; trial 2 d=-.125 margin .625: tie from f=.25
    assert s.gt_xy.tolist() == [[1, 1, 0], [0, 0, 0], [1, 0, 0]]
    assert s.gt_yx.tolist() == [[1, 0, 0], [0, 0, 0], [1, 1, 0]]
    assert s.eq.tolist() == [[1, 2, 3], [3, 3, 3], [1, 2, 3]]
    assert s.minority_rate.tolist() == [2 / 9, 0, 0]
    assert s.ties.tolist() == [5 / 9, 7 / 9, 1]
    assert s.ties_at_minority(0.05) == 7 / 9


def test_equal_means_tie_even_without_fuzziness():
    s = stability(X3[[0, 2]], np.array([[0, 4], [1, 5]]), fuzziness=[0.0])
    assert s.eq.tolist() == [[2]] and s.minority_rate.tolist() == [0]


def test_fuzziness_boundary_is_strict():
    # d = .25, larger mean .5: f = .5 gives margin .25 exactly -- not a tie; just above is
    X = np.array([[0.5, 0.5], [0.25, 0.25]])
    s = stability(X, np.array([[0], [1]]), fuzziness=[0.5, 0.5000001])
    assert s.eq.tolist() == [[0, 2]]
    assert s.gt_xy.tolist() == [[2, 0]]


def test_a_difference_at_the_margin_but_for_rounding_is_not_a_tie():
    # 0.5 - 0.4 = 0.09999999999999998 and 0.2 * 0.5 = 0.1 in floating point; exactly, the
    # difference equals the margin, which the paper does not count as a tie
    X = np.array([[0.5, 0.5], [0.4, 0.4]])
    assert abs(X[0, 0] - X[1, 0]) < 0.2 * 0.5  # the rounding the engine must see through
    s = stability(X, np.array([[0], [1]]), fuzziness=[0.2, 0.2000001])
    assert s.eq.tolist() == [[0, 2]]
    assert s.gt_xy.tolist() == [[2, 0]]


def test_ties_at_minority_is_nan_when_never_reached():
    s = stability(X3, np.array([[0, 1], [4, 7]]), fuzziness=[0.0])
    assert math.isnan(s.ties_at_minority(0.05))


# -- swap rates, counted by hand -------------------------------------------------------------
def test_swap_rates_by_hand_with_zero_differences():
    # per (trial, pair) d(Q), d(Q'):   (A,B)          (A,C)     (B,C)
    # t0 Q={0,1} Q'={4,7}            .125/-.125 sw   0/0 sw    -.125/.125 sw
    # t1 Q={2,3} Q'={0,1}            0/.125 sw       0/0 sw    0/-.125 sw
    # t2 Q={4,5} Q'={0,6}            .125/0 sw       0/0 sw    -.125/0 sw
    # t3 Q={0,1} Q'={4,5}            .125/.125       0/0 sw    -.125/-.125
    subsets = np.array([[[0, 1], [4, 7]], [[2, 3], [0, 1]], [[4, 5], [0, 6]], [[0, 1], [4, 5]]])
    sw = swap_rates(X3, subsets)
    counter = np.zeros(21, int)
    counter[0], counter[12] = 6, 6
    swaps = np.zeros(21, int)
    swaps[0], swaps[12] = 6, 4
    assert sw.counter.tolist() == counter.tolist()
    assert sw.swaps.tolist() == swaps.tolist()
    assert sw.rate[0] == 1 and sw.rate[12] == 4 / 6
    assert np.isnan(sw.rate[1]) and math.isnan(sw.threshold) and sw.share == 0


def test_swap_threshold_share_and_relative_by_hand():
    # z = A - B per question = .5 .25 0 0 .5 -.25
    X = np.array([[0.5, 0.25, 0.25, 0, 0.5, 0], [0, 0, 0.25, 0, 0, 0.25]])
    subsets = np.array(
        [
            [[0, 1], [4, 5]],  # d .375 (bin 20) / .125: no swap
            [[0, 4], [1, 2]],  # .5 (bin 20) / .125: no swap
            [[1, 5], [0, 2]],  # 0 (bin 0) / .25: a swap (a zero difference)
            [[2, 5], [0, 1]],  # -.125 (bin 12) / .375: a swap
            [[1, 4], [0, 3]],  # .375 (bin 20) / .25: no swap
        ]
    )
    sw = swap_rates(X, subsets)
    assert sw.counter[[0, 12, 20]].tolist() == [1, 1, 3] and sw.counter.sum() == 5
    assert sw.swaps[[0, 12, 20]].tolist() == [1, 1, 0]
    assert sw.threshold == 0.2
    assert sw.share == 3 / 5
    # larger of the two means over Q per trial: .375 .5 .125 .25 .375
    assert sw.relative == pytest.approx(0.2 / (1.625 / 5))


def test_swap_threshold_is_past_every_bin_above_five_percent():
    """The threshold is the lowest bin from which every non-empty bin is at most 5%, not
    the first bin at or below 5%: bin 0.05 has no swap, but bin 0.12 after it has."""
    # one question per subset: d(Q) is the question's difference z = .05 .12 .3 -.3
    X = np.array([[0.05, 0.12, 0.3, 0.0], [0.0, 0.0, 0.0, 0.3]])
    subsets = np.array([[[0], [2]], [[1], [3]], [[2], [0]]])  # no swap, a swap, no swap
    sw = swap_rates(X, subsets)
    assert sw.counter[[5, 12, 20]].tolist() == [1, 1, 1]
    assert sw.swaps[[5, 12, 20]].tolist() == [0, 1, 0]
    assert sw.threshold == 0.2 and sw.share == 1 / 3
    # the better run's mean over Q per trial: .05, .12, .3
    assert sw.relative == pytest.approx(0.2 / ((0.05 + 0.12 + 0.3) / 3))


def test_difference_bins():
    d = np.array([0, 0.0099, 0.01, 0.03, -0.03, 0.199, 0.2, 0.7])
    assert difference_bin(d).tolist() == [0, 0, 1, 3, 3, 19, 20, 20]


# -- bootstrap, t and Tukey -------------------------------------------------------------------
def t_by_hand(mean, sd, n):
    """mean / (sd / sqrt(n)); 0 when both are zero (within 1e-12), +-inf when only the
    standard error is."""
    se = sd / math.sqrt(n)
    if se <= 1e-12:
        return 0.0 if abs(mean) <= 1e-12 else math.copysign(math.inf, mean)
    return mean / se


def reference_asl(X, boot):
    """Sakai 2006 Figure 1, one pair and one bootstrap sample at a time, in plain Python
    (statistics and math): z the pair's differences, w = z - mean(z) (zero within
    1e-12), ASL = (#{b : |t(w*_b)| >= |t(z)|} + 1) / (B + 1) (Phipson and Smyth 2010:
    the observed arrangement counts), a mean (observed or bootstrap) within 1e-12 of
    zero being zero."""
    n = X.shape[1]
    rows = X.tolist()
    out = []
    for x, y in itertools.combinations(range(len(rows)), 2):
        z = [a - b for a, b in zip(rows[x], rows[y], strict=True)]
        zbar = statistics.fmean(z)
        t_obs = t_by_hand(0.0 if abs(zbar) <= 1e-12 else zbar, statistics.stdev(z), n)
        w = [0.0 if abs(v - zbar) <= 1e-12 else v - zbar for v in z]
        count = 0
        for sample in boot.tolist():
            ws = [w[q] for q in sample]
            mean = statistics.fmean(ws)
            mean = 0.0 if abs(mean) <= 1e-12 else mean
            t = t_by_hand(mean, statistics.stdev(ws), n)
            count += abs(t) >= abs(t_obs) * (1 - 1e-9)
        out.append((count + 1) / (len(boot) + 1))
    return np.array(out)


def reference_tukey(X, runs, trials, seed):
    """The randomised Tukey HSD in plain Python with the engine's permutations taken as
    given (``draw_permutations``, the runs by name): each trial deals every question's
    scores to the runs as its permutation says, and the p-value of a pair counts the
    trials whose spread of run means reaches the pair's difference, plus one for the
    observed arrangement, over trials + 1.  Checks on the way
    that a trial permutes each question's scores among themselves only."""
    names = sorted(runs)
    rows = [X[list(runs).index(name)].tolist() for name in names]  # the runs by name
    m, n = len(rows), len(rows[0])
    spreads = []
    for perm in draw_permutations(n, m, trials=trials, seed=seed):
        assert perm.shape == (n, m)
        perm = perm.tolist()
        sums = [0.0] * m
        for q in range(n):
            assert sorted(perm[q]) == list(range(m))
            dealt = [rows[perm[q][j]][q] for j in range(m)]
            assert sorted(dealt) == sorted(row[q] for row in rows)  # question q's scores
            for j in range(m):
                sums[j] += dealt[j]
        means = [v / n for v in sums]
        spreads.append(max(means) - min(means))
    assert len(spreads) == trials
    mean = [math.fsum(row) / n for row in X.tolist()]  # the runs as given
    p = []
    for x, y in itertools.combinations(range(len(mean)), 2):
        d = abs(mean[x] - mean[y])
        d = 0.0 if d <= 1e-12 else d
        p.append((sum(s >= d * (1 - 1e-9) - 1e-12 for s in spreads) + 1) / (trials + 1))
    return np.array(p)


def test_bootstrap_asl_matches_the_loop():
    rng = np.random.default_rng(7)
    X = rng.random((4, 9))
    samples = draw_samples([f"q{i}" for i in range(9)], trials=300, seed=11)
    got = bootstrap_asl(X, samples.bootstrap, chunk=2).asl
    assert got.tolist() == reference_asl(X, samples.bootstrap).tolist()


def test_bootstrap_asl_extremes():
    X = np.array(
        [
            [0.2, 0.4, 0.6, 0.8, 1.0, 0.3],
            [0.2, 0.4, 0.6, 0.8, 1.0, 0.3],  # identical: ASL 1
            [0.1, 0.3, 0.5, 0.7, 0.9, 0.2],
        ]
    )  # constant difference .1 from the first
    boot = draw_samples(list("abcdef"), trials=200, seed=1).bootstrap
    asl = bootstrap_asl(X, boot).asl
    assert asl[0] == 1.0
    assert asl[1] == 1 / 201  # never 0: the observed arrangement counts


def test_a_difference_zero_but_for_rounding_is_never_significant():
    """z = 1, -1, .3 (1 - .7, one ulp above), -.3: the mean difference is zero but for
    rounding, whose sign and size depend on the order of the questions; the observed
    mean is zero within 1e-12 as the bootstrap means are, so the ASL is 1 either way."""
    X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.7, 0.3]])
    boot = draw_samples(list("abcd"), trials=200, seed=0).bootstrap
    assert (X[0] - X[1]).mean() != 0  # rounding
    assert bootstrap_asl(X, boot).asl.tolist() == [1.0]
    assert bootstrap_asl(X[:, ::-1], boot).asl.tolist() == [1.0]
    assert reference_asl(X, boot).tolist() == [1.0]


def test_tukey_matches_the_loop():
    rng = np.random.default_rng(3)
    X = rng.random((4, 8))
    runs = ["c", "a", "d", "b"]
    got = tukey_hsd(X, runs, trials=400, seed=5)
    assert got.tolist() == reference_tukey(X, runs, 400, 5).tolist()


def test_tukey_permutations_are_seeded_and_within_each_question():
    draws = list(draw_permutations(7, 4, trials=50, seed=9))
    again = list(draw_permutations(7, 4, trials=50, seed=9))
    other = list(draw_permutations(7, 4, trials=50, seed=10))
    assert len(draws) == 50 and all(p.shape == (7, 4) for p in draws)
    assert all(np.array_equal(a, b) for a, b in zip(draws, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(draws, other, strict=True))
    stacked = np.stack(draws)  # every row a permutation of the runs; not all the identity
    assert (np.sort(stacked, axis=2) == np.arange(4)).all()
    assert (stacked != np.arange(4)).any(axis=2).mean() > 0.9


def test_paired_t_and_intervals_match_scipy():
    rng = np.random.default_rng(4)
    X = rng.random((3, 10))
    p = paired_t(X)
    for k, (x, y) in enumerate(itertools.combinations(range(3), 2)):
        assert p[k] == pytest.approx(stats.ttest_rel(X[x], X[y]).pvalue, rel=1e-10)
    boot = draw_samples([str(i) for i in range(10)], trials=500, seed=2).bootstrap
    iv = mean_intervals(X, boot)
    for i in range(3):
        lo, hi = stats.t.interval(0.95, 9, loc=X[i].mean(), scale=stats.sem(X[i]))
        assert (iv.t_low[i], iv.t_high[i]) == pytest.approx((lo, hi), rel=1e-12)
        means = [X[i][boot[b]].mean() for b in range(500)]
        assert (iv.boot_low[i], iv.boot_high[i]) == pytest.approx(
            tuple(np.percentile(means, [2.5, 97.5])), rel=1e-12
        )


def test_t_and_bootstrap_intervals_alone_are_mean_intervals_parts():
    rng = np.random.default_rng(6)
    X = rng.random((3, 12))
    boot = draw_samples([str(i) for i in range(12)], trials=300, seed=1).bootstrap
    iv = mean_intervals(X, boot, level=0.9)
    assert [a.tolist() for a in t_intervals(X, level=0.9)] == [
        iv.t_low.tolist(),
        iv.t_high.tolist(),
    ]
    assert [a.tolist() for a in bootstrap_intervals(X, boot, level=0.9)] == [
        iv.boot_low.tolist(),
        iv.boot_high.tolist(),
    ]
    lo, hi = stats.t.interval(0.9, 11, loc=X[0].mean(), scale=stats.sem(X[0]))
    assert t_intervals(X, level=0.9)[0][0] == pytest.approx(lo, rel=1e-12)
    assert t_intervals(X, level=0.9)[1][0] == pytest.approx(hi, rel=1e-12)


@pytest.mark.parametrize(("n", "trials", "seed"), [(2, 1, 0), (7, 130, 3), (40, 300, 11)])
def test_draw_bootstrap_is_draw_samples_bootstrap(n, trials, seed):
    want = draw_samples([f"q{i}" for i in range(n)], trials=trials, seed=seed).bootstrap
    got = draw_bootstrap(n, trials=trials, seed=seed, chunk=64)
    assert got.shape == (trials, n) and np.array_equal(got, want)


def test_holm_by_hand():
    adj = holm(np.array([0.01, 0.04, 0.03, 0.2]))
    assert adj == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert holm(np.array([0.5, 0.6])).tolist() == [1.0, 1.0]


def test_kendall_tau():
    assert kendall_tau([0.3, 0.2, 0.1], [0.3, 0.1, 0.2]) == pytest.approx(1 / 3)


# -- samples ---------------------------------------------------------------------------------
def test_draw_samples_shapes_and_disjoint_subsets():
    s = draw_samples([f"q{i}" for i in range(9)], trials=50, seed=0)
    assert s.subset_size == 4
    assert s.stability.shape == (50, 4) and s.swap.shape == (50, 2, 4)
    assert s.bootstrap.shape == (50, 9)
    for b in range(50):
        assert len(set(s.stability[b])) == 4
        assert not set(s.swap[b, 0]) & set(s.swap[b, 1])
    again = draw_samples([f"q{i}" for i in range(9)], trials=50, seed=0)
    assert np.array_equal(s.swap, again.swap) and s.tukey_seed == again.tukey_seed


def test_drawn_samples_seed_the_tukey_hsd_with_their_own_seed():
    """The reliability report's Tukey HSD is ``tukey_hsd`` with the sampling seed and B,
    as the ranking page computes it; the permutations are a stream of their own."""
    X = np.random.default_rng(8).random((4, 10))
    runs = ["d", "b", "a", "c"]
    for seed in (0, 5, 2**40):
        s = draw_samples([str(i) for i in range(10)], trials=120, seed=seed)
        assert s.tukey_seed == seed
        r = metric_reliability(X, s, runs=runs)
        assert r.p_tukey.tolist() == tukey_hsd(X, runs, trials=120, seed=seed).tolist()
    first = tukey_generator(3).random(5)
    assert first.tolist() == tukey_generator(3).random(5).tolist()
    assert first.tolist() != np.random.default_rng(3).random(5).tolist()


@pytest.mark.parametrize("kwargs", [{"subset_size": 5}, {"subset_size": 0}, {"trials": 0}])
def test_draw_samples_rejects(kwargs):
    with pytest.raises(ValueError):
        draw_samples([f"q{i}" for i in range(9)], **kwargs)


def test_samples_round_trip_gives_identical_results():
    questions = ["q 1", "=2", "q,3", 'q"4', "q#5", "a\nb", "'=x", "007", "NA", " lead"]
    X = np.random.default_rng(1).random((3, 10))
    samples = draw_samples(questions, trials=40, seed=9)
    text = samples_to_csv(samples)
    back = samples_from_csv(text.encode())
    assert back.questions == tuple(questions) and back.tukey_seed == samples.tukey_seed
    for kind in ("stability", "swap", "bootstrap"):
        assert np.array_equal(getattr(back, kind), getattr(samples, kind))
    # the product's one CSV reader reads it too, every id as it was
    preamble, header, rows = read_csv(text)
    assert preamble["trials"] == "40" and header == ["sample", "trial", "subset", "question_id"]
    assert [r[3] for r in rows if r[0] == "question"] == questions
    runs = ["a", "b", "c"]
    one = reliability_report({("ap", "3:2:1"): X}, runs, samples)
    two = reliability_report({("ap", "3:2:1"): X}, runs, back)
    for table in TABLES.values():
        assert table(one) == table(two)
    # and in another question order
    order = [3, 1, 0, 2, 7, 6, 5, 4, 9, 8]
    shuffled = X[:, order]
    aligned = shuffled[:, back.column_order([questions[i] for i in order])]
    three = reliability_report({("ap", "3:2:1"): aligned}, runs, back)
    for table in TABLES.values():
        assert table(one) == table(three)


def test_samples_file_keeps_the_tukey_trials():
    X = np.random.default_rng(3).random((3, 8))
    runs = ["a", "b", "c"]
    samples = draw_samples([f"q{i}" for i in range(8)], trials=30, seed=2, tukey_trials=9)
    text = samples_to_csv(samples)
    assert read_csv(text)[0]["tukey_trials"] == "9"
    back = samples_from_csv(text)
    assert (back.trials, back.tukey_trials) == (30, 9)
    one = reliability_report({("ap", "g"): X}, runs, samples)
    two = reliability_report({("ap", "g"): X}, runs, back)
    assert pairs_csv(one) == pairs_csv(two)
    assert read_csv(pairs_csv(two))[0]["tukey_trials"] == "9"
    assert all(round(p * 10, 9) == round(p * 10) for p in two.results["ap", "g"].p_tukey)
    # a file written before tukey_trials was kept: B permutations
    older = samples_from_csv(text.replace("# tukey_trials=9\n", ""))
    assert older.tukey_trials == 30
    assert draw_samples([f"q{i}" for i in range(8)], trials=30).tukey_trials == 30
    with pytest.raises(ValueError, match="tukey_trials"):
        samples_from_csv(text.replace("# tukey_trials=9", "# tukey_trials=0"))
    with pytest.raises(ValueError, match="Tukey permutations"):
        draw_samples(list("abcd"), trials=2, tukey_trials=0)


def test_samples_file_errors():
    text = samples_to_csv(draw_samples(list("abcd"), trials=2, seed=0))
    with pytest.raises(ValueError):
        samples_from_csv(text.replace("format=", "format=x"))
    with pytest.raises(ValueError):
        samples_from_csv(text.replace("stability,1,0,", "stability,7,0,", 1))
    with pytest.raises(ValueError):
        draw_samples(list("abcd"), trials=2).column_order(list("abce"))


def test_summary_is_sorted_by_discrimination():
    rng = np.random.default_rng(0)
    base = rng.random((4, 1)) * 0.5
    sharp = base + rng.random((4, 40)) * 0.1  # small noise: strongly discriminating
    blunt = rng.random((4, 40))
    samples = draw_samples([str(i) for i in range(40)], trials=100, seed=0)
    report = reliability_report(
        {("blunt", "g"): blunt, ("sharp", "g"): sharp}, list("abcd"), samples
    )
    rows = report.summary()
    assert [r["metric"] for r in rows] == ["sharp", "blunt"]
    text = summary_csv(report)
    assert text.startswith("# table=summary\n") and "sharp,g," in text


def test_a_tie_in_discrimination_goes_to_the_smaller_relative_difference():
    """Two metrics whose scores differ by a constant: the same differences, so the same
    swaps and significance, but the higher one's 5%-swap difference is the smaller share of
    its scores; it comes first, whatever the names' alphabetical order."""
    rng = np.random.default_rng(0)
    low = rng.random((4, 1)) * 0.3 + rng.random((4, 40)) * 0.4
    samples = draw_samples([str(i) for i in range(40)], trials=100, seed=0)
    report = reliability_report(
        {("a_low", "g"): low, ("z_high", "g"): low + 0.3}, list("abcd"), samples
    )
    rows = report.summary()
    a, z = sorted(rows, key=lambda r: r["metric"])
    assert (a["swap_share"], a["significant_share"]) == (z["swap_share"], z["significant_share"])
    assert z["swap_relative"] < a["swap_relative"]
    assert [r["metric"] for r in rows] == ["z_high", "a_low"]


# -- properties ------------------------------------------------------------------------------
values = st.sampled_from([0.0, 0.125, 0.25, 0.3, 1 / 3, 0.5, 0.7, 1.0])


@st.composite
def matrices(draw):
    m = draw(st.integers(2, 4))
    n = draw(st.integers(4, 10))
    rows = draw(st.lists(st.lists(values, min_size=n, max_size=n), min_size=m, max_size=m))
    return np.array(rows)


@settings(max_examples=40, deadline=None)
@given(matrices(), st.integers(0, 2**32 - 1))
def test_rates_are_proportions_and_ties_grow_with_fuzziness(X, seed):
    s = draw_samples([str(i) for i in range(X.shape[1])], trials=20, seed=seed)
    f = [0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0]
    stab = stability(X, s.stability, f)
    assert ((stab.gt_xy + stab.gt_yx + stab.eq) == 20).all()
    assert (np.diff(stab.eq, axis=1) >= 0).all()
    assert (np.diff(stab.ties) >= 0).all()
    assert ((stab.minority_rate >= 0) & (stab.minority_rate <= 0.5)).all()
    sw = swap_rates(X, s.swap)
    rate = sw.rate[~np.isnan(sw.rate)]
    assert ((rate >= 0) & (rate <= 1)).all()
    assert sw.counter.sum() == 20 * len(X) * (len(X) - 1) // 2
    assert 0 <= sw.share <= 1


@settings(max_examples=30, deadline=None)
@given(matrices(), st.integers(0, 2**32 - 1))
def test_identical_runs_are_never_significant(X, seed):
    X = np.vstack([X, X[:1]])  # the last run repeats the first
    n = X.shape[1]
    s = draw_samples([str(i) for i in range(n)], trials=30, seed=seed)
    r = metric_reliability(X, s, runs=[f"r{i}" for i in range(len(X))])
    k = len(X) - 2  # pair (0, last) in run_pairs order
    x, y = run_pairs(len(X))
    assert (x[k], y[k]) == (0, len(X) - 1)
    assert r.discrimination.asl[k] == 1.0
    assert r.p_t[k] == 1.0 and r.p_holm[k] == 1.0 and r.p_tukey[k] == 1.0
    assert r.swaps.swaps.sum() >= 30  # a zero difference is a swap in every trial
    assert (r.stability.eq[k] == 30).all()


@settings(max_examples=30, deadline=None)
@given(matrices(), st.integers(0, 2**32 - 1))
def test_asl_and_tukey_match_the_loops(X, seed):
    assume(np.ptp(X, axis=0).max() > 0)  # some question tells two runs apart
    n = X.shape[1]
    s = draw_samples([str(i) for i in range(n)], trials=25, seed=seed)
    assert bootstrap_asl(X, s.bootstrap).asl.tolist() == reference_asl(X, s.bootstrap).tolist()
    runs = [f"r{(7 * i) % 11}" for i in range(len(X))]  # names in another order
    got = tukey_hsd(X, runs, trials=25, seed=seed)
    assert got.tolist() == reference_tukey(X, runs, 25, seed).tolist()


@settings(max_examples=30, deadline=None)
@given(matrices())
def test_intervals_contain_the_mean(X):
    assume(np.ptp(X, axis=1).min() > 0)  # every run varies: a non-degenerate interval
    s = draw_samples([str(i) for i in range(X.shape[1])], trials=50, seed=0)
    iv = mean_intervals(X, s.bootstrap)
    assert (iv.t_low < iv.mean).all() and (iv.mean < iv.t_high).all()
    assert (iv.boot_low <= iv.boot_high).all()


def test_pickled_samples_leave_the_count_matrices_behind():
    import pickle

    s = draw_samples([str(i) for i in range(20)], trials=30, seed=1)
    assert "indicators" in s.__dict__
    back = pickle.loads(pickle.dumps(s))
    assert "indicators" not in back.__dict__
    assert np.array_equal(back.indicators["bootstrap"], s.indicators["bootstrap"])
    assert np.array_equal(back.swap, s.swap) and back.tukey_seed == s.tukey_seed
    assert back.tukey_trials == 30
    # a copy pickled before the samples kept their Tukey permutations gets B
    state = s.__getstate__()
    del state["tukey_trials"]
    old = Samples.__new__(Samples)
    old.__setstate__(state)
    assert old.tukey_trials == 30


# -- the order of the runs ---------------------------------------------------------------------
def named_pairs(report):
    """Per unordered pair of run names and (metric, gains): every pair figure, oriented
    from the smaller name to the larger (a difference and GT counts turn with it)."""
    x, y = run_pairs(len(report.runs))
    out = {}
    for key, r in report.results.items():
        st = r.stability
        for k, (i, j) in enumerate(zip(x.tolist(), y.tolist(), strict=True)):
            a, b = report.runs[i], report.runs[j]
            flip = a > b
            diff = float(r.intervals.mean[i] - r.intervals.mean[j])
            out[(*key, min(a, b), max(a, b))] = (
                -diff if flip else diff,
                float(r.discrimination.asl[k]),
                float(r.p_t[k]),
                float(r.p_holm[k]),
                float(r.p_tukey[k]),
                (st.gt_yx if flip else st.gt_xy)[k].tolist(),
                (st.gt_xy if flip else st.gt_yx)[k].tolist(),
                st.eq[k].tolist(),
            )
    return out


def named_runs(report):
    out = {}
    for key, r in report.results.items():
        iv = r.intervals
        for i, run in enumerate(report.runs):
            out[(*key, run)] = tuple(
                float(a[i]) for a in (iv.mean, iv.t_low, iv.t_high, iv.boot_low, iv.boot_high)
            )
    return out


def test_every_figure_is_the_same_whatever_the_order_of_the_runs():
    """The randomised Tukey HSD permutes the runs in the order of their names, and every
    other figure is computed in that order too: the same samples and the runs given in
    another order give the same figures per named run and pair, to the last bit."""
    rng = np.random.default_rng(12)
    names = ["delta", "alpha", "echo", "charlie", "bravo", "foxtrot"]
    X = np.round(rng.random((6, 30)) * 8) / 8  # ties and zero differences included
    X[5] = X[1]
    samples = draw_samples([f"q{i}" for i in range(30)], trials=300, seed=4)
    sharp = np.arange(6)[:, None] * 0.1 + X * 0.1  # a swap threshold and a relative one
    matrices = {("ap", "default"): X, ("rr", "default"): X**2, ("sharp", "default"): sharp}
    one = reliability_report(matrices, names, samples)
    for order in ([2, 0, 4, 1, 3, 5], [5, 4, 3, 2, 1, 0], sorted(range(6), key=names.__getitem__)):
        two = reliability_report(
            {k: v[order] for k, v in matrices.items()}, [names[i] for i in order], samples
        )
        assert named_pairs(two) == named_pairs(one)
        assert named_runs(two) == named_runs(one)
        assert repr(two.summary()) == repr(one.summary())  # NaN is no NaN's equal
        assert summary_csv(two) == summary_csv(one)
        assert curves_csv(two) == curves_csv(one)
        for key, r in one.results.items():
            sw = two.results[key].swaps
            assert sw.counter.tolist() == r.swaps.counter.tolist()
            assert sw.swaps.tolist() == r.swaps.swaps.tolist()
            assert repr((sw.threshold, sw.share, sw.relative)) == repr(
                (r.swaps.threshold, r.swaps.share, r.swaps.relative)
            )
    assert not math.isnan(one.results["sharp", "default"].swaps.relative)


def test_tukey_hsd_is_the_same_whatever_the_order_of_the_runs():
    rng = np.random.default_rng(2)
    names = ["r3", "r1", "r4", "r0", "r2"]
    X = rng.random((5, 12))
    want = tukey_hsd(X, names, trials=200, seed=3)
    x, y = run_pairs(5)
    by_pair = {
        frozenset((names[i], names[j])): want[k]
        for k, (i, j) in enumerate(zip(x.tolist(), y.tolist(), strict=True))
    }
    for order in ([1, 3, 0, 4, 2], [4, 3, 2, 1, 0]):
        got = tukey_hsd(X[order], [names[i] for i in order], trials=200, seed=3)
        for k, (i, j) in enumerate(zip(x.tolist(), y.tolist(), strict=True)):
            assert got[k] == by_pair[frozenset((names[order[i]], names[order[j]]))]


# -- Sakai's difference required for significance ----------------------------------------------
def reference_difference(X, boot, alpha):
    """Sakai 2006 (Figure 4) one pair at a time in plain Python: per pair, the bootstrap
    samples w*_b sorted by |t(w*_b)| descending (ties by the lower b), the one at position
    floor(B alpha) gives |mean(w*_b)|; the figure is the largest over the pairs whose ASL
    (``reference_asl``) is below alpha, NaN when none is."""
    n = X.shape[1]
    rows = X.tolist()
    asl = reference_asl(X, boot)
    k = math.floor(len(boot) * alpha + 1e-9)
    found = []
    for p, (x, y) in enumerate(itertools.combinations(range(len(rows)), 2)):
        z = [a - b for a, b in zip(rows[x], rows[y], strict=True)]
        zbar = statistics.fmean(z)
        w = [0.0 if abs(v - zbar) <= 1e-12 else v - zbar for v in z]
        ts = []
        for b, sample in enumerate(boot.tolist()):
            ws = [w[q] for q in sample]
            mean = statistics.fmean(ws)
            mean = 0.0 if abs(mean) <= 1e-12 else mean
            ts.append((-abs(t_by_hand(mean, statistics.stdev(ws), n)), b, abs(mean)))
        if asl[p] < alpha and k >= 1:
            found.append(sorted(ts)[k - 1][2])
    return max(found) if found else math.nan


def test_difference_required_by_hand():
    """The example of docs/formats.md: z = (.3, .1, .2), w = (.1, -.1, 0), four bootstrap
    samples with |t(w*)| = 2, 0, .5, 1; none reaches |t(z)| = 3.464, so ASL = 1/5; at
    alpha = .5 the position is floor(4 x .5) = 2, the second largest |t| is 1 (sample 3,
    w* = (0, 0, -.1)), whose |mean| is 1/30."""
    X = np.array([[0.5, 0.3, 0.4], [0.2, 0.2, 0.2]])
    boot = np.array([[0, 0, 2], [0, 1, 2], [1, 1, 0], [2, 2, 1]])
    d = bootstrap_asl(X, boot, alpha=0.5)
    assert d.asl.tolist() == [0.2]
    assert d.difference[0] == pytest.approx(1 / 30)
    assert d.required_difference == pytest.approx(1 / 30)
    assert reference_difference(X, boot, 0.5) == pytest.approx(1 / 30)
    # at alpha = .05 the position floor(4 x .05) = 0 is no sample: no figure
    assert math.isnan(bootstrap_asl(X, boot).required_difference)


def test_difference_required_matches_the_loop():
    rng = np.random.default_rng(5)
    X = rng.random((5, 12)) + np.arange(5)[:, None] * 0.08
    boot = draw_samples([f"q{i}" for i in range(12)], trials=200, seed=4).bootstrap
    d = bootstrap_asl(X, boot, chunk=3)
    assert (d.asl < 0.05).any() and not (d.asl < 0.05).all()
    assert d.required_difference == pytest.approx(reference_difference(X, boot, 0.05), abs=1e-15)


def test_difference_required_is_in_the_summary_and_follows_the_run_order():
    rng = np.random.default_rng(6)
    X = rng.random((4, 10)) + np.arange(4)[:, None] * 0.1
    s = draw_samples([f"q{i}" for i in range(10)], trials=100, seed=1)
    one = reliability_report({("ap", "g"): X}, ["a", "b", "c", "d"], s)
    two = reliability_report({("ap", "g"): X[::-1]}, ["d", "c", "b", "a"], s)
    want = bootstrap_asl(X, s.bootstrap).required_difference
    assert one.summary()[0]["bootstrap_difference"] == want
    assert two.summary()[0]["bootstrap_difference"] == want


def test_npz_samples_round_trip_exactly():
    """The compact samples file reads back to the same samples (ids with control and
    non-ASCII characters, a seed or none), and so to the same figures."""
    questions = ["q\x00", "q,1", "é", "=2", *[f"q{i}" for i in range(6)]]
    s = draw_samples(questions, trials=25, seed=8, tukey_trials=6)
    for samples in (dataclasses.replace(s, seed=None), s):  # back: s read back
        buf = io.BytesIO()
        samples_to_npz(samples, buf)
        back = read_samples(buf.getvalue())
        assert back.questions == samples.questions and back.seed == samples.seed
        assert (back.subset_size, back.tukey_seed, back.tukey_trials) == (5, 8, 6)
        for k in ("stability", "swap", "bootstrap"):
            assert np.array_equal(getattr(back, k), getattr(samples, k))
    X = np.random.default_rng(1).random((3, 10))
    one = reliability_report({("ap", "g"): X}, ["a", "b", "c"], s)
    two = reliability_report({("ap", "g"): X}, ["a", "b", "c"], back)
    assert all(t(one) == t(two) for t in TABLES.values())
