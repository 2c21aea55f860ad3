"""The glossary's entries by key: which anchor of the glossary page (/help/glossary/,
``templates/help/glossary.html``) defines a metric column (``q_measure``, ``ndcg@5``) or
another figure the pages show (``R``, ``kappa``, ``asl``).  Plain strings: config imports
no app, so the metric keys are written out here (``tests/test_glossary.py`` checks that
every key the engine scores has an entry and every anchor is on the page)."""

from __future__ import annotations

ANCHORS: dict[str, str] = {
    # the metric columns (DESIGN.md section 5)
    "q_measure": "q-measure",
    "r_measure": "r-measure",
    "rr": "rr",
    "ap": "ap",
    "ap_rigid": "ap-rigid",
    "awp": "awp",
    "rwp": "awp",
    "r_prec": "r-prec",
    "p": "precision",
    "ndcg": "ndcg",
    "rbp": "rbp",
    "rr_trunc": "rr-trunc",
    "ap_trunc": "ap-trunc",
    "ndcg_trunc": "ndcg-trunc",
    "rbp_trunc": "rbp-trunc",
    # the other figures of the score, reliability and agreement pages
    "R": "r",
    "L": "l",
    "version": "version",
    "kappa": "kappa",
    "alpha": "alpha",
    "pairs_f1": "pairs-f1",
    "ari": "ari",
    "bcubed": "bcubed",
    "swap_rate": "swap-rate",
    "asl": "asl",
    "discriminative_power": "discriminative-power",
    "tukey": "tukey-hsd",
    "holm": "holm",
    "t_interval": "t-interval",
    "minority_rate": "minority-rate",
}


def glossary_anchor(key: str) -> str | None:
    """The anchor of ``key``'s entry (a cut-off metric ``p@5``, ``ndcg@10`` has its
    metric's), or None when the glossary does not define it."""
    if key in ANCHORS:
        return ANCHORS[key]
    base, at, k = key.partition("@")
    return ANCHORS.get(base) if at and k.isdigit() else None
