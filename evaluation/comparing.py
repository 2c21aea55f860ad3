"""Runs compared and ranked (DESIGN.md section 5): the comparison of two runs question by
question with its paired tests, and the system ranking of a collection's runs with the
95% intervals of their means, the all-pairs tests and the agreement of the metrics'
rankings.  Reads only: the scores come from ``services.score_runs`` (kept in the
database), the statistics from ``evaluation.analysis``.  A module of its own so that what
imports ``services`` (every management command) does not import pandas and scipy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.core.cache import caches

from annotate.models import Collection
from evaluation.analysis.score_config import ScoreConfig
from evaluation.analysis.significance import (
    MeanIntervals,
    PairTests,
    TestConfig,
    pair_tests,
    score_intervals,
)
from evaluation.analysis.stats import (
    Paired,
    difference_order,
    disagreements,
    paired,
    rank_correlations,
)

from .models import Run
from .score_store import StoredScores
from .services import score_runs


@dataclass(frozen=True)
class Comparison:
    """Runs A and B compared question by question (DESIGN.md section 5): per-question
    scores, differences B - A, the paired tests of each metric, the questions ordered by
    their difference, and where the Q-measure and RR differences disagree."""

    a: Run
    b: Run
    metrics: tuple[str, ...]
    scores: StoredScores
    per_question_a: pd.DataFrame
    per_question_b: pd.DataFrame
    diffs: pd.DataFrame
    tests: tuple[Paired, ...]
    order: tuple[str, ...]
    q_metric: str
    rr_metric: str
    disagree: tuple[str, ...]

    def disagree_largest_first(self) -> list[str]:
        """``disagree`` ordered as the compare page lists it: by the size of the
        ``q_metric`` difference, largest first (ties in question order)."""
        if not self.disagree:
            return []
        size = self.diffs.loc[list(self.disagree), self.q_metric].abs()
        return [str(q) for q in size.sort_values(ascending=False, kind="stable").index]


def runs_compare(
    *, collection: Collection, run_a: Run, run_b: Run, config: ScoreConfig
) -> Comparison:
    """Score ``run_a`` and ``run_b`` under ``config`` and compare them (B - A)."""
    scores = score_runs(collection, [run_a, run_b], config)
    metrics = tuple(config.metrics)
    pa = scores.per_question[run_a.name][list(metrics)]
    pb = scores.per_question[run_b.name][list(metrics)]
    diffs = pb - pa
    tests = tuple(_paired(m, pa[m], pb[m]) for m in metrics)
    q_metric = "q_measure" if "q_measure" in metrics else metrics[0]
    rr_metric = "rr" if "rr" in metrics else metrics[-1]
    disagree = (
        tuple(disagreements(diffs[rr_metric], diffs[q_metric])) if q_metric != rr_metric else ()
    )
    return Comparison(
        a=run_a,
        b=run_b,
        metrics=metrics,
        scores=scores,
        per_question_a=pa,
        per_question_b=pb,
        diffs=diffs,
        tests=tests,
        order=tuple(difference_order(diffs)),
        q_metric=q_metric,
        rr_metric=rr_metric,
        disagree=disagree,
    )


def _paired(metric: str, a: pd.Series, b: pd.Series) -> Paired:
    """``stats.paired``, cached under the scores it compares (as ``_pair_tests``): its
    randomization test draws 10,000 permutations of 2,000 differences at size M, a fifth
    of the compare page's time, for the same answer every time.  The key hashes the
    scores themselves: no query."""
    x = np.ascontiguousarray(a.to_numpy(dtype=float))
    y = np.ascontiguousarray(b.to_numpy(dtype=float))
    digest = hashlib.sha256(x.tobytes())
    digest.update(y.tobytes())
    digest.update(metric.encode())
    key = "paired:" + digest.hexdigest()
    cache = caches["scores"]
    tested = cache.get(key)
    if tested is None:
        tested = paired(metric, x, y)
        cache.set(key, tested, 600)
    return tested


@dataclass(frozen=True)
class SystemRanking:
    """The runs of a collection ranked by their means: ``runs`` by name, ``order`` best
    first on the first metric (ties keep the name order), ``ranks`` per metric (ties share
    the better rank), and Kendall's tau / Spearman's rho between the metrics' rankings
    (None with fewer than one run)."""

    runs: tuple[Run, ...]
    order: tuple[Run, ...]
    metrics: tuple[str, ...]
    means: pd.DataFrame
    ranks: pd.DataFrame
    correlations: pd.DataFrame | None
    intervals: MeanIntervals | None = None
    pairs: PairTests | None = None


def runs_rank(
    *,
    collection: Collection,
    runs: Sequence[Run],
    config: ScoreConfig,
    tests: TestConfig | None = None,
    intervals: bool = True,
    pairs: bool = True,
) -> SystemRanking:
    """Mean scores of ``runs`` under ``config``, the system ranking they give and the
    agreement between the rankings of the configured metrics; with ``tests``, also the
    95% interval of every mean (``intervals``) and the all-pairs tests of the first
    metric in ranking order (``pairs``), as ``tests`` says
    (``evaluation.analysis.significance``)."""
    runs = tuple(runs)
    metrics = tuple(config.metrics)
    scores = score_runs(collection, runs, config) if runs else None
    if scores is not None:
        means = scores.means()[list(metrics)]
    else:
        means = pd.DataFrame(columns=list(metrics), dtype=float)
    ranks = means.rank(ascending=False, method="min")
    order = tuple(sorted(runs, key=lambda r: -means.at[r.name, metrics[0]]))
    correlations = rank_correlations(means) if runs else None
    ivs = tested = None
    if tests is not None and scores is not None:
        ivs = score_intervals(scores, tests) if intervals else None
        if pairs:
            tested = _pair_tests(scores, metrics[0], [r.name for r in order], tests)
    return SystemRanking(
        runs=runs,
        order=order,
        metrics=metrics,
        means=means,
        ranks=ranks,
        correlations=correlations,
        intervals=ivs,
        pairs=tested,
    )


def _pair_tests(
    scores: StoredScores, metric: str, order: Sequence[str], tests: TestConfig
) -> PairTests:
    """``significance.pair_tests``, cached under the scores it was computed from, so the
    page and its CSV compute it once: the randomised Tukey HSD takes seconds on 50 runs x
    5,000 questions, and the paired t-tests of 100 runs' 4,950 pairs a fifth of a second
    at size M.  The key hashes the score matrix itself: no query."""
    X = np.ascontiguousarray(scores.values[:, scores.metrics.index(metric), :])
    digest = hashlib.sha256(X.tobytes())
    digest.update(repr((scores.runs, tuple(order), metric, tests)).encode())
    key = "pairs:" + digest.hexdigest()
    cache = caches["scores"]
    tested = cache.get(key)
    if tested is None:
        tested = pair_tests(scores, metric=metric, order=order, config=tests)
        cache.set(key, tested, 600)
    return tested
