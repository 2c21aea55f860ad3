"""What the score pages, their CSV downloads and the API compute scores with: one
``ScoreConfig``, checked by one function against a collection's levels (the form that
reads it from a request, ``evaluation.forms.ScoreConfigForm``, calls it).  The checks
are the engine's (``parse_metrics``, ``parse_gains``, ``check_parameters``), which
qa-score calls on its own options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.metrics import DEFAULT_METRICS, GainProfile, parse_gains, parse_metrics
from evaluation.metrics.gains import DEFAULT_BETA, DEFAULT_RBP_P, check_parameters

# the paper's Figure 3 compares two runs by Q-measure and reciprocal rank
COMPARE_METRICS: tuple[str, ...] = ("q_measure", "rr")

# the most metrics a page or API request may ask for at once (each p@k / ndcg@k is a pass
# over every run's answers; the command line has no such bound)
MAX_METRICS = 32


@dataclass(frozen=True)
class ScoreConfig:
    """What a score page is computed with (kept in the URL so a view can be shared)."""

    metrics: tuple[str, ...] = DEFAULT_METRICS
    gains: str = "default"
    beta: float = DEFAULT_BETA
    rbp_p: float = DEFAULT_RBP_P

    def profile(self) -> GainProfile:
        return parse_gains(None if self.gains == "default" else self.gains)

    def key(self) -> str:
        return f"{','.join(self.metrics)}|{self.gains}|{self.beta!r}|{self.rbp_p!r}"


def check_config(
    *, metrics: Sequence[str], gains: str, beta: float, rbp_p: float, levels: Sequence[str]
) -> ScoreConfig:
    """Validate a configuration against a collection's levels; raise ValueError."""
    names = tuple(parse_metrics(list(metrics)))
    if len(names) > MAX_METRICS:
        raise ValueError(
            f"{len(names)} metrics asked for; a page or API request scores at most "
            f"{MAX_METRICS} at once"
        )
    profile = parse_gains(None if gains == "default" else gains)
    profile.resolve(tuple(levels), [1.0] * len(levels))  # raises on a mismatch
    check_parameters(beta=beta, rbp_p=rbp_p)
    return ScoreConfig(names, gains, float(beta), float(rbp_p))
