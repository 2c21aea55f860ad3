"""Stability (Buckley and Voorhees; ``graded-relevance-metric-reliability.txt``, Figure 1):
GT/EQ counts per run pair over B subsets of the questions, with fuzziness f; the minority
rate and the proportion of ties, over f."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .pairs import TOL, ratio, run_pairs, subset_means, zero_small
from .swaps import SWAP_LEVEL

#: fuzziness values of the stability curves (the paper varies f from 0.01 to 0.20)
FUZZINESS = tuple(round(0.01 * i, 2) for i in range(21))


@dataclass(frozen=True, eq=False)
class Stability:
    """Counts per run pair (rows, ``run_pairs`` order) and fuzziness (columns): ``gt_xy``,
    ``gt_yx``, ``eq``; and per fuzziness the minority rate and the proportion of ties."""

    fuzziness: np.ndarray
    gt_xy: np.ndarray
    gt_yx: np.ndarray
    eq: np.ndarray

    @property
    def minority_rate(self) -> np.ndarray:
        """sum over pairs of min(GT(x,y), GT(y,x)) / (pairs x B), per f (paper eq. 8)."""
        total = (self.gt_xy + self.gt_yx + self.eq).sum(axis=0)
        return ratio(np.minimum(self.gt_xy, self.gt_yx).sum(axis=0), total)

    @property
    def ties(self) -> np.ndarray:
        """sum over pairs of EQ(x,y) / (pairs x B), per f (paper eq. 9)."""
        return ratio(self.eq.sum(axis=0), (self.gt_xy + self.gt_yx + self.eq).sum(axis=0))

    def ties_at_minority(self, level: float = SWAP_LEVEL) -> float:
        """The proportion of ties at the smallest f whose minority rate is at most
        ``level`` (the paper's Table 1 slices the curves at 5%); NaN if none is."""
        ok = np.flatnonzero(self.minority_rate <= level)
        return float(self.ties[ok[0]]) if len(ok) else float("nan")


def stability(
    X: np.ndarray,
    subsets: np.ndarray,
    fuzziness: Sequence[float] = FUZZINESS,
    *,
    indicator: np.ndarray | None = None,
) -> Stability:
    """Buckley-Voorhees counts (paper Figure 1): for each pair x < y and subset Q_b,
    margin = f max(M(x,Q_b), M(y,Q_b)); EQ if |M(x,Q_b) - M(y,Q_b)| < margin or the two
    means are equal (both within TOL: a difference that equals the margin but for
    floating-point rounding is at the margin, not below it), else GT(x,y) if
    M(x,Q_b) > M(y,Q_b), else GT(y,x)."""
    means = subset_means(X, subsets, indicator)
    x, y = run_pairs(len(means))
    mx, my = means[x], means[y]
    d = zero_small(mx - my)
    absd, margin = np.abs(d), np.maximum(mx, my)
    zero, ahead = d == 0, d > 0
    f = np.asarray(fuzziness, dtype=float)
    eq = np.empty((len(x), len(f)), dtype=np.int64)
    gt_xy = np.empty_like(eq)
    for k, fk in enumerate(f):
        # strictly below the margin: a difference within TOL of it is at the margin (0.5 -
        # 0.4 is 0.09999999999999998 in floating point, 0.2 x 0.5 is 0.1: no tie)
        tie = (absd < fk * margin - TOL) | zero
        eq[:, k] = tie.sum(axis=1)
        gt_xy[:, k] = (ahead & ~tie).sum(axis=1)
    gt_yx = means.shape[1] - eq - gt_xy
    return Stability(f, gt_xy, gt_yx, eq)
