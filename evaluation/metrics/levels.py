"""The default correctness levels and their gains (DESIGN.md section 5), in a module of
their own: the annotation app's models read them when Django starts, which then needs no
numpy (``manage.py`` start-up; ``data`` re-exports them)."""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_LEVELS = ("S", "A", "B")


def default_gains(levels: Sequence[str]) -> tuple[float, ...]:
    """Gains n, n-1, ..., 1 for n levels, highest first (3:2:1 for S, A, B)."""
    n = len(levels)
    return tuple(float(n - i) for i in range(n))
