"""Paired comparison of two runs and rank correlation of metrics: pure numpy/scipy.

Called by ``evaluation/services.py`` (the ORM adapter) and the views; no Django here.
DESIGN.md section 5: per-question difference B - A, counts of questions up / down /
tied, sign test (two-sided, ties dropped), Wilcoxon signed-rank, paired t-test, a paired
randomization test (seeded, >= 10,000 permutations) and an effect size; Kendall's tau and
Spearman's rho between the system rankings two metrics give.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

PERMUTATIONS = 10_000
SEED = 20040601


@dataclass(frozen=True)
class Paired:
    """The comparison of runs A and B on one metric over the same questions."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    up: int      # questions where B > A
    down: int    # questions where B < A
    tied: int
    sign_p: float
    wilcoxon_p: float
    t_p: float
    randomization_p: float
    effect_size: float  # mean difference / sd of the differences (Cohen's d_z)

    @property
    def mean_diff(self) -> float:
        return self.mean_b - self.mean_a


def _nan_to_none(x: float) -> float:
    return float(x) if x is not None and not math.isnan(x) else math.nan


def randomization_p(d: np.ndarray, *, permutations: int = PERMUTATIONS,
                    seed: int = SEED) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(d) = 0.

    With at most 16 non-zero differences every sign assignment is enumerated (the exact
    p-value, as scipy.stats.permutation_test gives); otherwise ``permutations`` seeded
    random assignments, p = (1 + #{|mean*| >= |mean|}) / (1 + permutations)."""
    d = np.asarray(d, dtype=float)
    nz = d[d != 0]
    if not len(nz):
        return math.nan
    obs = abs(nz.sum())
    eps = 1e-9 * max(obs, 1e-300)
    m = len(nz)
    if m <= 16:
        signs = 1 - 2 * ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1)
        return float(np.mean(np.abs(signs @ nz) >= obs - eps))
    rng = np.random.default_rng(seed)
    count, done = 0, 0
    while done < permutations:
        k = min(1000, permutations - done)
        signs = rng.integers(0, 2, size=(k, m), dtype=np.int8) * 2 - 1
        count += int(np.count_nonzero(np.abs(signs @ nz) >= obs - eps))
        done += k
    return (count + 1) / (permutations + 1)


def paired(metric: str, a: pd.Series | np.ndarray, b: pd.Series | np.ndarray, *,
           permutations: int = PERMUTATIONS, seed: int = SEED, tol: float = 1e-12) -> Paired:
    """Compare per-question scores ``a`` and ``b`` (same questions, same order).

    Differences within ``tol`` count as ties (floating noise).  p-values that a test cannot
    give (no differences at all, fewer than two questions) are NaN."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("the two runs must be scored on the same questions")
    d = b - a
    d = np.where(np.abs(d) <= tol, 0.0, d)
    up, down = int((d > 0).sum()), int((d < 0).sum())
    n = len(d)
    nz = up + down
    sign_p = stats.binomtest(up, nz, 0.5).pvalue if nz else math.nan
    wilcoxon_p = stats.wilcoxon(d[d != 0]).pvalue if nz else math.nan
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if n > 1 and sd > 0:
        t_p = stats.ttest_rel(b, a).pvalue
        effect = float(np.mean(d)) / sd
    else:
        t_p = math.nan
        effect = math.nan
    rand_p = randomization_p(d, permutations=permutations, seed=seed)
    return Paired(metric, n, float(np.mean(a)) if n else 0.0, float(np.mean(b)) if n else 0.0,
                  up, down, n - nz, float(sign_p), _nan_to_none(wilcoxon_p), _nan_to_none(t_p),
                  _nan_to_none(rand_p), effect)


def disagreements(diff_x: pd.Series, diff_y: pd.Series, tol: float = 1e-12) -> pd.Index:
    """Questions where one metric's difference is zero and the other's is not (the paper's
    QAC1-1013, 1021, 1037, 1056, 1058: RR difference 0, Q-measure difference not)."""
    zx = diff_x.abs() <= tol
    zy = diff_y.abs() <= tol
    return diff_x.index[zx != zy]


def rank_correlations(means: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau (tau-b) and Spearman's rho between the system rankings of every pair
    of metrics; ``means`` has one row per run and one column per metric."""
    rows = []
    cols = list(means.columns)
    for i, x in enumerate(cols):
        for y in cols[i + 1:]:
            if len(means) < 2:
                tau = rho = math.nan
            else:  # a metric giving every run the same score has no ranking: NaN
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", stats.ConstantInputWarning)
                    tau = stats.kendalltau(means[x], means[y]).statistic
                    rho = stats.spearmanr(means[x], means[y]).statistic
            rows.append({"metric_a": x, "metric_b": y, "kendall_tau": _nan_to_none(tau),
                         "spearman_rho": _nan_to_none(rho)})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "kendall_tau", "spearman_rho"])
