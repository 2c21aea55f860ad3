"""Swap rates and discrimination (Voorhees and Buckley in the stricter form of
``graded-relevance-metric-reliability.txt``, Figure 2): B pairs of disjoint subsets, 21
difference bins of width 0.01, the swap rate per bin, and the smallest difference whose
swap rate is at most 5% with the share of comparisons that reach it (Tables 2-3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pairs import ratio, run_pairs, subset_means, zero_small

BIN_WIDTH = 0.01


NBINS = 21  # [0, 0.01), [0.01, 0.02), ..., [0.20, inf)


SWAP_LEVEL = 0.05


@dataclass(frozen=True, eq=False)
class Swaps:
    """Per difference bin: ``counter`` (comparisons whose |d(Q_b)| fall in it), ``swaps``
    and ``rate`` (NaN for an empty bin); ``threshold`` is the smallest difference (a bin's
    lower edge) from which every non-empty bin's swap rate is at most 5% (NaN: none),
    ``share`` the share of comparisons with |d(Q_b)| >= threshold and ``relative`` the
    threshold over the mean of max(M(x,Q_b), M(y,Q_b)) (the paper's Tables 2-3)."""

    counter: np.ndarray
    swaps: np.ndarray
    threshold: float
    share: float
    relative: float

    @property
    def rate(self) -> np.ndarray:
        return ratio(self.swaps, self.counter)

    @property
    def edges(self) -> np.ndarray:
        return np.round(np.arange(NBINS) * BIN_WIDTH, 2)


def difference_bin(d: np.ndarray) -> np.ndarray:
    """BIN(d): 0 for 0 <= d < 0.01, ..., 20 for d >= 0.20 (a tiny slack so that 0.03 is in
    bin 3 although 0.03/0.01 < 3 in floating point)."""
    return np.minimum(np.floor(np.abs(d) / BIN_WIDTH + 1e-9), NBINS - 1).astype(np.int64)


def swap_rates(
    X: np.ndarray,
    swap_subsets: np.ndarray,
    *,
    level: float = SWAP_LEVEL,
    indicators: tuple[np.ndarray, np.ndarray] | None = None,
) -> Swaps:
    """Voorhees-Buckley swap rates in the paper's stricter form: for each pair and trial,
    counter(BIN(|d(Q_b)|))++ and, when d(Q_b) d(Q'_b) <= 0, swap_counter(same bin)++."""
    X = np.asarray(X, dtype=float)
    i0, i1 = indicators or (None, None)
    first = subset_means(X, swap_subsets[:, 0], i0)
    second = subset_means(X, swap_subsets[:, 1], i1)
    x, y = run_pairs(len(X))
    d1 = zero_small(first[x] - first[y])
    d2 = zero_small(second[x] - second[y])
    bins = difference_bin(d1).ravel()
    counter = np.bincount(bins, minlength=NBINS)
    swapped = (d1 * d2 <= 0).ravel()
    swaps = np.bincount(bins[swapped], minlength=NBINS)
    rate = ratio(swaps, counter)
    bad = np.flatnonzero((counter > 0) & (rate > level))
    start = bad[-1] + 1 if len(bad) else 0
    nonempty = np.flatnonzero(counter[start:] > 0)
    if not len(nonempty) or counter.sum() == 0:
        return Swaps(counter, swaps, float("nan"), 0.0, float("nan"))
    b = start + int(nonempty[0])
    threshold = round(b * BIN_WIDTH, 2)
    share = float(counter[b:].sum() / counter.sum())
    scale = float(np.maximum(first[x], first[y]).mean()) if len(x) else 0.0
    relative = threshold / scale if scale > 0 else float("nan")
    return Swaps(counter, swaps, threshold, share, relative)
