"""The few array operations the engine needs beyond numpy, without pandas.

pandas takes most of a second to import; the command-line scorer (``qa-score``) starts
in a fraction of that, so the engine's scoring path uses these instead.  Each matches the
pandas call it replaces (``pd.factorize``, ``Index.get_indexer``, ``Series.duplicated``)
for the values the engine gives it: strings or integers, never missing values.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

import numpy as np


def factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques): ``uniques`` in order of first appearance and ``uniques[codes]``
    equal to ``values`` (``pd.factorize`` without missing values)."""
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind in "iub":
        if not len(arr):
            return np.empty(0, dtype=np.int64), arr[:0]
        uniq, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        return rank[inverse.ravel()], uniq[order]
    items = arr.tolist() if isinstance(arr, np.ndarray) else list(values)
    first = list(dict.fromkeys(items))  # iterations in C, not in a Python loop
    position = dict(zip(first, range(len(first)), strict=True))
    codes = np.fromiter(map(position.__getitem__, items), dtype=np.int64, count=len(items))
    uniques = np.empty(len(first), dtype=object)
    uniques[:] = first
    return codes, uniques


def unique(values) -> np.ndarray:
    """The distinct values in order of first appearance (``pd.unique``)."""
    return factorize(values)[1]


def duplicated(values: np.ndarray) -> np.ndarray:
    """True for every value seen earlier in ``values`` (``Series.duplicated()``, keep
    the first)."""
    out = np.ones(len(values), dtype=bool)
    if len(values):
        # a stable sort: return_index gives each value's first position
        out[np.unique(values, return_index=True)[1]] = False
    return out


class Index:
    """Positions of distinct values (``pd.Index(values).get_indexer``)."""

    def __init__(self, values: Iterable):
        self.values = (
            np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
        )
        items = self.values.tolist()
        self._pos = dict(zip(items, range(len(items)), strict=True))

    def __len__(self) -> int:
        return len(self.values)

    def get_indexer(self, keys) -> np.ndarray:
        """Position of each key; -1 where a key is not in the index."""
        items = keys.tolist() if isinstance(keys, np.ndarray) else list(keys)
        return np.fromiter(
            map(self._pos.get, items, repeat(-1, len(items))), dtype=np.int64, count=len(items)
        )
