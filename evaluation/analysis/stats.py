"""Paired comparison of two runs and rank correlation of metrics: pure numpy/scipy.

Called by ``evaluation/services.py`` (the ORM adapter); no Django here.
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
EXACT_SIGNS = 16  # up to this many non-zero differences the randomization test is exact
SEED = 20040601


@dataclass(frozen=True)
class Paired:
    """The comparison of runs A and B on one metric over the same questions."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    up: int  # questions where B > A
    down: int  # questions where B < A
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


def _sign_bits(m: int) -> np.ndarray:
    """Every assignment of m signs: a (2**m, m) array of 0/1 (1 = the observed sign)."""
    return (np.arange(2**m)[:, None] >> np.arange(m)) & 1


def _byte_tables(values: np.ndarray) -> np.ndarray:
    """For each block of 8 values, the sum of the values selected by each byte (256 sums a
    block, block after block): a sum over any selection of the values is then one look-up
    a block, at ``256 * block + byte``."""
    blocks = -(-len(values) // 8)
    padded = np.zeros(blocks * 8)
    padded[: len(values)] = values
    bits = _sign_bits(8).astype(float)  # (256, 8)
    return (padded.reshape(blocks, 8) @ bits.T).ravel()  # (blocks * 256,)


def randomization_p(d: np.ndarray, *, permutations: int = PERMUTATIONS, seed: int = SEED) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(d) = 0.

    With at most 16 non-zero differences every sign assignment is enumerated (the exact
    p-value, as scipy.stats.permutation_test gives); otherwise ``permutations`` seeded
    random assignments, each sign kept or flipped with probability 1/2 independently,
    p = (1 + #{|sum*| >= |sum|}) / (1 + permutations).

    The random assignments are drawn as random bytes, 8 signs a byte; the signed sum of
    an assignment is 2 * (sum of the kept values) - sum of all, and the sum of the kept
    values is one table look-up per 8 values (``_byte_tables``), so 10,000 assignments of
    5,000 differences cost about 6 million look-ups instead of a 10,000 x 5,000 product."""
    d = np.asarray(d, dtype=float)
    nz = d[d != 0]
    if not len(nz):
        return math.nan
    total = float(nz.sum())
    obs = abs(total)
    eps = 1e-9 * max(obs, 1e-300)
    m = len(nz)
    if m <= EXACT_SIGNS:
        signs = 1 - 2 * _sign_bits(m)
        return float(np.mean(np.abs(signs @ nz) >= obs - eps))
    rng = np.random.default_rng(seed)
    tables = _byte_tables(nz)
    blocks = len(tables) // 256
    offsets = np.arange(blocks, dtype=np.int32) * 256
    count, done = 0, 0
    while done < permutations:
        k = min(2000, permutations - done)
        picks = rng.integers(0, 256, size=(k, blocks), dtype=np.uint8).astype(np.int32)
        picks += offsets
        kept = tables[picks].sum(axis=1)
        count += int(np.count_nonzero(np.abs(2 * kept - total) >= obs - eps))
        done += k
    return (count + 1) / (permutations + 1)


def wilcoxon_p(d: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of the non-zero differences ``d``, as
    ``scipy.stats.wilcoxon(d).pvalue`` gives it.  scipy answers at most 13 differences
    with tied magnitudes by a permutation test that enumerates the 2**n sign assignments
    through a generic (slow: about 0.4 s) path; this computes that same enumeration as one
    matrix product, and leaves every other case to scipy."""
    d = np.asarray(d, dtype=float)
    d = d[d != 0]
    if not len(d):
        return math.nan
    magnitudes = np.abs(d)
    tied = len(np.unique(magnitudes)) < len(d)
    if not tied or len(d) > 13:
        return float(stats.wilcoxon(d).pvalue)
    ranks = stats.rankdata(magnitudes)  # average ranks, as scipy's statistic uses
    observed = float(ranks[d > 0].sum())
    null = _sign_bits(len(d)) @ ranks  # r_plus of every sign assignment
    gamma = abs(np.finfo(float).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma) / len(null)
    greater = np.count_nonzero(null >= observed - gamma) / len(null)
    return float(np.clip(2 * min(less, greater), 0.0, 1.0))


def paired(
    metric: str,
    a: pd.Series | np.ndarray,
    b: pd.Series | np.ndarray,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = SEED,
    tol: float = 1e-12,
) -> Paired:
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
    wilcoxon = wilcoxon_p(d) if nz else math.nan
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if n > 1 and sd > 0:
        t_p = stats.ttest_rel(b, a).pvalue
        effect = float(np.mean(d)) / sd
    else:
        t_p = math.nan
        effect = math.nan
    rand_p = randomization_p(d, permutations=permutations, seed=seed)
    return Paired(
        metric,
        n,
        float(np.mean(a)) if n else 0.0,
        float(np.mean(b)) if n else 0.0,
        up,
        down,
        n - nz,
        float(sign_p),
        _nan_to_none(wilcoxon),
        _nan_to_none(t_p),
        _nan_to_none(rand_p),
        effect,
    )


def format_p(p: float) -> str:
    """A p-value as a page shows it: 4 decimals, scientific notation below 0.0001 (so
    4.5e-08 is not shown as 0.0000), a dash when there is none."""
    if p is None or math.isnan(p):
        return "—"
    return f"{p:.1e}" if 0 < p < 1e-4 else f"{p:.4f}"


def format_resampled_p(p: float, trials: int) -> str:
    """A p-value of a resampling test of ``trials`` samples, (count + 1) / (trials + 1)
    (the bootstrap ASL, the randomised Tukey HSD), as a page shows it: at its floor
    1 / (trials + 1), when no sample reached the observed figure, the p-value is below the
    samples' resolution and reads "< 1/B" (``< 0.001`` for B = 1,000); otherwise as
    ``format_p``.  The CSV files keep the number (``p_text``)."""
    if p is None or math.isnan(p):
        return format_p(p)
    if trials >= 1 and p <= (1 + 1e-9) / (trials + 1):
        return f"< {1 / trials:.4g}"
    return format_p(p)


def p_text(p: float) -> str | None:
    """A p-value as a CSV cell: its full precision (``repr``: 4.5e-08, 0.0123), None when
    there is none."""
    return None if p is None or math.isnan(p) else repr(float(p))


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
        for y in cols[i + 1 :]:
            if len(means) < 2:
                tau = rho = math.nan
            else:  # a metric giving every run the same score has no ranking: NaN
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", stats.ConstantInputWarning)
                    tau = stats.kendalltau(means[x], means[y]).statistic
                    rho = stats.spearmanr(means[x], means[y]).statistic
            rows.append(
                {
                    "metric_a": x,
                    "metric_b": y,
                    "kendall_tau": _nan_to_none(tau),
                    "spearman_rho": _nan_to_none(rho),
                }
            )
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "kendall_tau", "spearman_rho"])


def difference_order(diffs: pd.DataFrame) -> list[str]:
    """Question ids by their difference on the first metric, smallest first; ties by the
    next metrics' differences, then by question id."""
    if not len(diffs):
        return []
    keys = [diffs.index.to_numpy(dtype=str)]
    keys += [diffs[m].to_numpy() for m in reversed(diffs.columns)]
    return [str(q) for q in diffs.index.to_numpy()[np.lexsort(keys)]]
