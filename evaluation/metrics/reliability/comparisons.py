"""Confidence intervals of every run's mean (t and bootstrap percentile) and the tests of
many run pairs: paired t-tests with Holm's correction and the randomised Tukey HSD
(Carterette 2012; Sakai 2014); Kendall's tau between two rankings of the runs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import t_statistic, tail_p
from .pairs import TOL, run_order, run_pairs, zero_small
from .samples import count_matrix


@dataclass(frozen=True, eq=False)
class Intervals:
    """Per run: ``mean``, the t interval (``t_low``, ``t_high``) and the bootstrap
    percentile interval (``boot_low``, ``boot_high``) at ``level``."""

    mean: np.ndarray
    t_low: np.ndarray
    t_high: np.ndarray
    boot_low: np.ndarray
    boot_high: np.ndarray
    level: float = 0.95


def t_intervals(X: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per run: mean +- t_{(1+level)/2, n-1} s/sqrt(n) over the questions."""
    # scipy here, not at the top: the forms and commands that import this module for its
    # names start without scipy's second of imports (tests/test_startup_imports.py)
    from scipy import stats

    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    mean = X.mean(axis=1)
    half = stats.t.ppf((1 + level) / 2, n - 1) * X.std(axis=1, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def bootstrap_intervals(
    X: np.ndarray, boot: np.ndarray, *, level: float = 0.95, indicator: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per run: the percentiles (1-level)/2 and (1+level)/2 of the run's means
    over the bootstrap samples ``boot`` (trials x n question positions)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    bmeans = X @ (count_matrix(boot, n) if indicator is None else indicator).T / n
    lo, hi = np.quantile(bmeans, [(1 - level) / 2, (1 + level) / 2], axis=1)
    return lo, hi


def mean_intervals(
    X: np.ndarray, boot: np.ndarray, *, level: float = 0.95, indicator: np.ndarray | None = None
) -> Intervals:
    """95% confidence intervals of each run's mean: the t interval (``t_intervals``) and
    the bootstrap percentile interval (``bootstrap_intervals``)."""
    X = np.asarray(X, dtype=float)
    t_low, t_high = t_intervals(X, level=level)
    lo, hi = bootstrap_intervals(X, boot, level=level, indicator=indicator)
    return Intervals(X.mean(axis=1), t_low, t_high, lo, hi, level)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: p_(i) (m - i + 1), made monotone, capped at 1."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if not m:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


# differences held at once by ``paired_t``: all the pairs' at once are runs^2 / 2 x
# questions doubles, 67 MB at 100 runs x 1,700 questions and five such arrays in flight
PAIR_BLOCK = 1_000_000


def paired_t(X: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p-value per run pair (1 when the runs' scores are equal on
    every question).  The pairs' differences are taken a block of pairs at a time: each
    pair's mean and deviation are a reduction over its own row, so the figures are the
    same to the last bit, in a bounded amount of memory."""
    from scipy import stats  # as in t_intervals

    X = np.asarray(X, dtype=float)
    x, y = run_pairs(len(X))
    n = X.shape[1]
    mean, sd = np.empty(len(x)), np.empty(len(x))
    step = max(1, PAIR_BLOCK // max(n, 1))
    for i in range(0, len(x), step):
        z = zero_small(X[x[i : i + step]] - X[y[i : i + step]])
        mean[i : i + step] = z.mean(axis=1)
        sd[i : i + step] = z.std(axis=1, ddof=1)
    t = t_statistic(mean, sd, n)
    return np.where(np.isinf(t), 0.0, 2 * stats.t.sf(np.abs(t), n - 1))


def tukey_generator(seed: int) -> np.random.Generator:
    """The generator of the randomised Tukey HSD's permutations for ``seed``, the one of
    every page and command (the ranking page's seed, the samples' ``tukey_seed``): the
    first child of the seed's ``numpy.random.SeedSequence``, a stream independent of
    ``default_rng(seed)``, which draws the samples."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def draw_permutations(
    nquestions: int, nruns: int, *, trials: int = 1000, seed: int = 0
) -> Iterator[np.ndarray]:
    """The randomised Tukey HSD's permutations, one (nquestions x nruns) array per trial
    from ``tukey_generator(seed)``: row q is a permutation of the runs 0..nruns-1 (in the
    order of their names), and in that trial run j is given question q's score of run
    ``perm[q, j]``; each question's scores are permuted on their own, never across
    questions.  These are the permutations ``tukey_hsd`` applies: it shuffles the scores
    themselves with the same generator calls (``Generator.permuted`` shuffles a row alike
    whatever the array's type), twice as fast as gathering them by these indices; the
    reference test, which deals the scores by these indices, keeps the two in step."""
    rng = tukey_generator(seed)
    identity = np.broadcast_to(np.arange(nruns, dtype=np.intp), (nquestions, nruns))
    for _ in range(trials):
        yield rng.permuted(identity, axis=1)


def tukey_hsd(
    X: np.ndarray, runs: Sequence[str], *, trials: int = 1000, seed: int = 0
) -> np.ndarray:
    """Randomised Tukey HSD p-value per run pair (Carterette 2012; Sakai 2014): in each
    trial every question's scores are permuted across the runs; p(x, y) = (#{trials whose
    largest difference of run means >= |mean(x) - mean(y)|} + 1) / (trials + 1), the
    observed arrangement counted as one of the arrangements (``tail_p``: never 0).  The permutations
    act on the runs in the order of their names ``runs`` (``run_order``), so the p-value
    of two named runs does not depend on the order of the rows of X; pairs in
    ``run_pairs`` order of X's rows.  The permutations are ``draw_permutations``' (from
    ``tukey_generator(seed)``)."""
    X = np.asarray(X, dtype=float)
    if len(runs) != len(X):
        raise ValueError(f"{len(X)} rows of scores but {len(runs)} run names")
    XT = np.ascontiguousarray(X[run_order(runs)].T)  # questions x runs (by name)
    rng = tukey_generator(seed)
    spread = np.empty(trials)
    for b in range(trials):  # draw_permutations' permutations, applied to the scores
        means = rng.permuted(XT, axis=1).mean(axis=0)
        spread[b] = means.max() - means.min()
    mean = X.mean(axis=1)
    x, y = run_pairs(len(X))
    d = np.abs(zero_small(mean[x] - mean[y]))
    spread = np.sort(spread)
    # the count of spreads >= d (with the same slack as the bootstrap)
    return tail_p(trials - np.searchsorted(spread, d * (1 - 1e-9) - TOL, side="left"), trials)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two rankings of the same runs given by their scores."""
    if len(a) < 2:
        return float("nan")
    from scipy import stats  # as in t_intervals

    return float(stats.kendalltau(a, b).statistic)
