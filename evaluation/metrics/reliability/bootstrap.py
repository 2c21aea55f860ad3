"""Discriminative power by the paired bootstrap (Sakai 2006): the achieved significance
level (ASL) of every run pair, the ASL curve and the share of pairs significant at 5%."""

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


@dataclass(frozen=True, eq=False)
class Discrimination:
    """ASL per run pair (``run_pairs`` order), the share of pairs with ASL < alpha and
    the ASL curve (ASLs sorted ascending, the paper's Figure of ASL by run pair)."""

    asl: np.ndarray
    alpha: float = ALPHA

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
    differences, w = z - mean(z); ASL = #{b : |t(w*_b)| >= |t(z)|} / B with w*_b the
    bootstrap sample b of w (the same question draws for every pair); a mean, observed
    or bootstrap, within TOL of zero is zero (so a zero difference has ASL 1)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    # resampling counts, trials x questions; rows sum to n
    K = count_matrix(boot, n) if indicator is None else indicator
    R = X @ K.T  # resampled sums of each run: the pairs' sums are differences of these
    x, y = run_pairs(len(X))
    asl = np.empty(len(x))
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
        asl[s] = (np.abs(t) >= np.abs(t_obs)[:, None] * (1 - 1e-9)).mean(axis=1)
    return Discrimination(asl, alpha)
