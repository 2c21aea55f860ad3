"""Discriminative power by the paired bootstrap (Sakai 2006): the achieved significance
level (ASL) of every run pair, the ASL curve, the share of pairs significant at 5% and
the estimated difference required for significance at 5% (Sakai 2006, section 4 and
Figure 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pairs import TOL, run_pairs, zero_small
from .samples import chunks, count_matrix

ALPHA = 0.05


def t_statistic(mean, sd, n: int):
    """mean / (sd / sqrt(n)); 0 when both are zero, +-inf when only sd is."""
    mean = np.asarray(mean, dtype=float)
    se = np.asarray(sd, dtype=float) / np.sqrt(n)
    small = se <= TOL
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(
            small,
            np.where(np.abs(mean) <= TOL, 0.0, np.sign(mean) * np.inf),
            mean / np.where(small, 1.0, se),
        )
    return t


def tail_p(count, trials: int):
    """A resampling p-value from its tail count: (count + 1) / (trials + 1) (Phipson and
    Smyth 2010): the observed arrangement is one of the arrangements, so the p-value is
    never 0 and at least 1 / (trials + 1)."""
    return (np.asarray(count, dtype=float) + 1) / (trials + 1)


def threshold_position(trials: int, alpha: float = ALPHA) -> int:
    """Sakai's B alpha, the 1-based position in the |t*| sorted descending whose bootstrap
    sample gives a pair's difference required for significance (0: B too small)."""
    return int(np.floor(trials * alpha + 1e-9))


@dataclass(frozen=True, eq=False)
class Discrimination:
    """ASL per run pair (``run_pairs`` order), the share of pairs with ASL < alpha and
    the ASL curve (ASLs sorted ascending, the paper's Figure of ASL by run pair);
    ``difference`` per pair is |mean(w*_b)| of the bootstrap sample b whose |t(w*_b)| is
    the B alpha-th largest (NaN when B alpha < 1), Sakai's difference required for
    significance (``required_difference``, the largest over the significant pairs)."""

    asl: np.ndarray
    alpha: float = ALPHA
    difference: np.ndarray | None = None

    @property
    def required_difference(self) -> float:
        """Sakai 2006 (Figure 4): the largest ``difference`` over the pairs with ASL <
        alpha, the estimated difference between two runs' means required for
        significance at alpha with this many questions; NaN when no pair is
        significant."""
        if self.difference is None:
            return float("nan")
        significant = self.asl < self.alpha
        d = self.difference[significant]
        d = d[~np.isnan(d)]
        return float(d.max()) if len(d) else float("nan")

    @property
    def curve(self) -> np.ndarray:
        return np.sort(self.asl)

    @property
    def share_significant(self) -> float:
        return float(np.mean(self.asl < self.alpha)) if len(self.asl) else float("nan")


def bootstrap_asl(
    X: np.ndarray,
    boot: np.ndarray,
    *,
    alpha: float = ALPHA,
    chunk: int = 512,
    indicator: np.ndarray | None = None,
) -> Discrimination:
    """Paired bootstrap test per run pair (Sakai 2006, Figure 1): z = per-question
    differences, w = z - mean(z); ASL = (#{b : |t(w*_b)| >= |t(z)|} + 1) / (B + 1) with
    w*_b the bootstrap sample b of w (the same question draws for every pair; the + 1s
    as ``tail_p``); a mean, observed or bootstrap, within TOL of zero is zero (so a zero
    difference has ASL 1).  Per pair also Sakai's difference at alpha: |mean(w*_b)| of
    the sample b at position ``threshold_position(B, alpha)`` of the |t(w*_b)| sorted
    descending (ties of |t| by the lower b)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    # resampling counts, trials x questions; rows sum to n
    K = count_matrix(boot, n) if indicator is None else indicator
    R = X @ K.T  # resampled sums of each run: the pairs' sums are differences of these
    x, y = run_pairs(len(X))
    asl = np.empty(len(x))
    difference = np.full(len(x), np.nan)
    B = len(K)
    k = threshold_position(B, alpha)
    for s in chunks(len(x), chunk):
        z = X[x[s]] - X[y[s]]
        zbar = z.mean(axis=1, keepdims=True)
        # a mean within TOL of zero is zero, as the bootstrap means below: else rounding
        # (its sign and size depend on the order of the questions) decides the ASL
        t_obs = t_statistic(zero_small(zbar[:, 0]), z.std(axis=1, ddof=1), n)
        w = z - zbar
        w[np.abs(w) <= TOL] = 0.0
        total = R[x[s]] - R[y[s]] - zbar * n  # sum of w over each bootstrap sample
        mean = zero_small(total / n)
        var = np.maximum((w * w) @ K.T - n * mean * mean, 0.0) / (n - 1)
        t = t_statistic(mean, np.sqrt(var), n)
        count = (np.abs(t) >= np.abs(t_obs)[:, None] * (1 - 1e-9)).sum(axis=1)
        asl[s] = tail_p(count, B)
        if k:
            at = np.argsort(-np.abs(t), axis=1, kind="stable")[:, k - 1]
            difference[s] = np.abs(np.take_along_axis(mean, at[:, None], axis=1)[:, 0])
    return Discrimination(asl, alpha, difference)
