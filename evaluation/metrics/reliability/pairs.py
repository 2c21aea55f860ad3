"""Run pairs and the arithmetic every reliability figure shares: the pairs x < y of the
runs, the canonical order of the runs (by name), the map from one order's pairs to the
other's, means over subsets of the questions, and the tolerance below which a difference
of means is zero."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .samples import count_matrix

#: differences of means at most this far from zero are zero (rounding of sums of floats)
TOL = 1e-12


def run_pairs(nruns: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) indices of every run pair x < y, in row-major order."""
    return np.triu_indices(nruns, 1)


def run_order(runs: Sequence[str]) -> np.ndarray:
    """The canonical order of the runs: the indices that sort their names (``X[order]``
    has the rows by name).  Every figure is computed in this order, so none depends on
    the order the runs were given in (the randomised Tukey HSD's permutations would);
    ValueError when two runs share a name."""
    names = [str(r) for r in runs]
    if len(set(names)) != len(names):
        raise ValueError("run names must be distinct")
    return np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)


def pair_map(order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each run pair of the given order (``run_pairs``), the index of the same two
    runs among the pairs of the canonical order ``X[order]``, and whether the pair is
    turned round there (its first run comes second by name)."""
    m = len(order)
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m)  # pos[i]: the canonical row of run i
    index = np.zeros((m, m), dtype=np.int64)
    cx, cy = run_pairs(m)
    index[cx, cy] = np.arange(len(cx))
    x, y = run_pairs(m)
    a, b = pos[x], pos[y]
    return index[np.minimum(a, b), np.maximum(a, b)], a > b


def zero_small(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) <= TOL, 0.0, d)


def ratio(num, den):
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.full(np.broadcast(num, den).shape, np.nan), where=den > 0)


def subset_means(
    X: np.ndarray, subsets: np.ndarray, indicator: np.ndarray | None = None
) -> np.ndarray:
    """(runs x trials) means of each run over each trial's questions."""
    X = np.asarray(X, dtype=float)
    if indicator is None:
        indicator = count_matrix(subsets, X.shape[1])
    return X @ indicator.T / subsets.shape[-1]
