"""Metric column names (DESIGN.md section 5): the one list, light enough for the
command line's ``--help`` (no numpy)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import _

# the scoring parameters' defaults everywhere (pages, API, command line): Q-measure's
# beta = 1 (the paper's choice) and the RBP persistence p = 0.5
DEFAULT_BETA = 1.0
DEFAULT_RBP_P = 0.5

BASE_METRICS = (
    "q_measure",
    "r_measure",
    "rr",
    "ap",
    "ap_rigid",
    "awp",
    "rwp",
    "r_prec",
    "ndcg",
    "rbp",
    "rr_trunc",
    "ap_trunc",
    "ndcg_trunc",
    "rbp_trunc",
)
DEFAULT_METRICS = ("q_measure", "r_measure", "rr", "ap", "ndcg@5")
_CUTOFF = re.compile(r"^(p|ndcg)@([1-9][0-9]*)$")


def parse_metrics(spec: str | Sequence[str]) -> list[str]:
    """Validate a comma list (or sequence) of metric column names; return them in order."""
    names = [m.strip() for m in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [m for m in names if m]
    if not names:
        raise ValueError(_("no metric named"))
    bad = [m for m in names if m not in BASE_METRICS and not _CUTOFF.match(m)]
    if bad:
        raise ValueError(
            _("unknown metric(s) %(bad)s; known: %(known)s, p@k, ndcg@k")
            % {"bad": ", ".join(bad), "known": ", ".join(BASE_METRICS)}
        )
    return list(dict.fromkeys(names))
