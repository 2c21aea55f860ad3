"""The comparison of two runs, as the compare page computes it.

One small function, so that when the comparison moves into a service returning a dataclass
(issue: "a view ... that returns a 7-tuple wants a service"), only this body changes."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from annotate.models import Collection
from evaluation import services
from evaluation.models import Run
from evaluation.stats import Paired, paired


@dataclass(frozen=True)
class Comparison:
    """Runs A and B scored on the same judged questions: per-question scores ``pa``,
    ``pb``, differences ``diffs`` (B - A) and one paired test per metric."""

    a: Run
    b: Run
    pa: pd.DataFrame
    pb: pd.DataFrame
    diffs: pd.DataFrame
    tests: list[Paired]


def compare_runs(*, collection: Collection, run_a: Run, run_b: Run,
                 config: services.ScoreConfig) -> Comparison:
    """The figures of the compare page and its CSV for ``run_a`` and ``run_b``."""
    scores = services.score_runs(collection, [run_a, run_b], config)
    pa, pb = scores.per_question[run_a.name], scores.per_question[run_b.name]
    return Comparison(run_a, run_b, pa, pb, pb - pa,
                      [paired(m, pa[m], pb[m]) for m in config.metrics])
