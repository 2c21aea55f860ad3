"""evaluation/analysis/stats.py against scipy called directly (no database)."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from evaluation.analysis.stats import disagreements, paired, randomization_p, rank_correlations


def sample(n, seed=0, shift=0.05):
    rng = np.random.default_rng(seed)
    a = rng.random(n).round(2)
    b = np.clip(a + rng.normal(shift, 0.2, n), 0, 1).round(2)
    b[: min(3, n // 3)] = a[: min(3, n // 3)]  # some ties
    return a, b


def test_counts_and_p_values_equal_scipy():
    a, b = sample(60)
    p = paired("q_measure", a, b)
    d = b - a
    assert (p.up, p.down, p.tied) == ((d > 0).sum(), (d < 0).sum(), (d == 0).sum())
    assert p.mean_a == pytest.approx(a.mean()) and p.mean_b == pytest.approx(b.mean())
    assert p.sign_p == pytest.approx(sps.binomtest(p.up, p.up + p.down).pvalue)
    assert p.wilcoxon_p == pytest.approx(sps.wilcoxon(d[d != 0]).pvalue)
    assert p.t_p == pytest.approx(sps.ttest_rel(b, a).pvalue)
    assert p.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert 0 < p.randomization_p <= 1


def test_randomization_is_exact_for_few_questions_and_equals_scipy():
    for n in (3, 8, 12):
        a, b = sample(n, seed=n, shift=0.2)
        want = sps.permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(y - x, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=100_000,
        ).pvalue
        assert randomization_p(b - a) == pytest.approx(want)


def test_randomization_is_seeded_and_uses_10000_permutations():
    a, b = sample(400, shift=0.01)
    p1 = randomization_p(b - a)
    assert p1 == randomization_p(b - a)
    assert (p1 * 10_001) == pytest.approx(round(p1 * 10_001))  # (k + 1) / (10,000 + 1)
    # close to the t-test on this many questions
    assert abs(p1 - sps.ttest_rel(b, a).pvalue) < 0.05


def test_identical_runs_give_no_p_values():
    a = np.array([0.1, 0.5, 1.0])
    p = paired("rr", a, a)
    assert (p.up, p.down, p.tied) == (0, 0, 3)
    assert math.isnan(p.sign_p) and math.isnan(p.wilcoxon_p) and math.isnan(p.randomization_p)


def test_disagreements_like_the_paper():
    import pandas as pd

    q = pd.Series([0.0, 0.1, -0.2, 0.0], index=["1013", "1021", "1006", "1001"])
    rr = pd.Series([0.0, 0.0, -0.1, 0.0], index=q.index)
    assert list(disagreements(rr, q)) == ["1021"]


def test_rank_correlations_equal_scipy():
    import pandas as pd

    means = pd.DataFrame(
        {
            "q_measure": [0.68, 0.64, 0.50, 0.55],
            "rr": [0.68, 0.64, 0.52, 0.51],
            "ap": [0.1, 0.2, 0.3, 0.4],
        },
        index=["AF", "noAF", "x", "y"],
    )
    table = rank_correlations(means)
    row = table[(table.metric_a == "q_measure") & (table.metric_b == "rr")].iloc[0]
    assert row.kendall_tau == pytest.approx(sps.kendalltau(means.q_measure, means.rr).statistic)
    assert row.spearman_rho == pytest.approx(sps.spearmanr(means.q_measure, means.rr).statistic)
    assert len(table) == 3


def reference_randomization_p(d, permutations, seed):
    """The sampled sign-flip test from its definition, one assignment and one value at a
    time: the same seeded random bytes as ``randomization_p`` draws (2,000 assignments a
    draw, a byte per 8 values, bit j of byte k keeping the sign of value 8k + j), each
    assignment's |signed sum| compared with |sum(d)|, and p = (count + 1) /
    (permutations + 1) (Phipson and Smyth 2010: the observed assignment is one of them)."""
    nz = [float(v) for v in d if v != 0]
    obs = abs(math.fsum(nz))
    eps = 1e-9 * max(obs, 1e-300)
    blocks = -(-len(nz) // 8)
    rng = np.random.default_rng(seed)
    count, done = 0, 0
    while done < permutations:
        k = min(2000, permutations - done)
        picks = rng.integers(0, 256, size=(k, blocks), dtype=np.uint8).tolist()
        for row in picks:
            signed = [v if (row[i // 8] >> (i % 8)) & 1 else -v for i, v in enumerate(nz)]
            count += abs(math.fsum(signed)) >= obs - eps
        done += k
    return (count + 1) / (permutations + 1)


def test_randomization_p_is_the_definition_and_never_zero():
    a, b = sample(40, seed=3, shift=0.1)
    d = b - a
    for permutations, seed in ((500, 1), (2500, 7)):
        got = randomization_p(d, permutations=permutations, seed=seed)
        assert got == pytest.approx(reference_randomization_p(d, permutations, seed), abs=1e-15)
    # a difference no assignment reaches: the smallest p-value, 1 / (T + 1), not 0
    big = np.full(30, 0.5)
    assert randomization_p(big, permutations=999) == 1 / 1000
    assert reference_randomization_p(big, 999, 20040601) == 1 / 1000


def test_a_resampled_p_value_at_its_floor_reads_below_one_over_b():
    from evaluation.analysis.stats import format_resampled_p

    assert format_resampled_p(1 / 1001, 1000) == "< 0.001"
    assert format_resampled_p(1 / 2001, 2000) == "< 0.0005"
    assert format_resampled_p(2 / 1001, 1000) == "0.0020"
    assert format_resampled_p(0.5, 1000) == "0.5000"
    assert format_resampled_p(math.nan, 1000) == "—"
