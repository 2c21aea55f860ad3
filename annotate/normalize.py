"""The matching key of an answer string (DESIGN.md section 4), for the models' ``key`` columns.

One definition serves the web app and the command-line scorer, so a string judged in the app
and the same string in a run file always get the same key: this module delegates to the
scoring engine's ``normalize_answer`` rather than keeping a second copy that could drift.
"""

from __future__ import annotations

from evaluation.metrics.normalize import MATCH_MODES
from evaluation.metrics.normalize import normalize_answer as _engine_normalize

__all__ = ["MATCH_MODES", "normalize_answer"]


def normalize_answer(text: str, mode: str) -> str:
    """Return the key of ``text`` under the collection matching ``mode``.

    ``normalized``: Unicode NFKC (full-width and half-width forms match), case-fold, collapse
    whitespace, strip surrounding whitespace and punctuation.  ``exact``: strip surrounding
    whitespace only.  Any other mode raises ``ValueError``.
    """
    return _engine_normalize(text, mode)
