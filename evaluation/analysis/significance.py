"""95% confidence intervals of the runs' means and the all-pairs significance tests of the
runs and ranking pages (DESIGN.md section 10), from scored runs (the engine's ``Scores``).

Every figure comes from ``evaluation.metrics.reliability``: the t interval
(``t_intervals``), the bootstrap percentile interval (``bootstrap_intervals`` over the
bootstrap samples ``draw_bootstrap`` draws: ``draw_samples``' for the same seed and B, so
they are the reliability page's), paired t-tests with Holm's correction (``paired_t``,
``holm``) and the randomised Tukey HSD (``tukey_hsd``, its permutations from
``tukey_generator`` of the seed and on the runs by name: the reliability page's for the
same seed and B).  No Django here: ``comparing.runs_rank`` and the views call it with
scores they already have, so it adds no query to a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import Scores
from evaluation.metrics.reliability.bootstrap import ALPHA
from evaluation.metrics.reliability.comparisons import (
    bootstrap_intervals,
    holm,
    paired_t,
    t_intervals,
    tukey_hsd,
)
from evaluation.metrics.reliability.pairs import run_pairs
from evaluation.metrics.reliability.samples import draw_bootstrap

INTERVALS = {"t": "t interval", "bootstrap": "bootstrap percentile interval"}
TESTS = {"holm": "paired t-test, Holm-corrected", "tukey": "randomised Tukey HSD"}
LEVEL = 0.95
DEFAULT_TRIALS = 1000
#: the bootstrap holds (B x questions) samples in memory: 2,000 x 5,000 is 80 MB a matrix
MAX_TRIALS = 2000
#: what one request may compute (runs x questions x trials, times metrics for the
#: bootstrap): about 10 s of CPU on a 2-core machine.  MAX_TRIALS alone does not bound it,
#: runs and questions do not stop at the benchmark's 50 x 5,000; past it, no figures and a
#: ``problem`` saying how many trials fit
MAX_TUKEY_WORK = 500_000_000
MAX_BOOTSTRAP_WORK = 5_000_000_000


def _too_much(what: str, trials: int, per_trial: int, limit: int) -> str | None:
    """Why ``trials`` of ``what`` (``per_trial`` units each) are not computed, or None."""
    if trials * per_trial <= limit:
        return None
    fit = limit // max(per_trial, 1)
    return f"{trials} {what} are too much work for this many runs and questions" + (
        f"; choose at most {fit} trials." if fit else "."
    )


@dataclass(frozen=True)
class TestConfig:
    """How the intervals and the pair tests are computed (kept in the URL): the interval
    (``t`` or ``bootstrap``), the pair test (``holm`` or ``tukey``), and the number of
    bootstrap samples / Tukey permutations and their seed."""

    interval: str = "t"
    test: str = "holm"
    trials: int = DEFAULT_TRIALS
    seed: int = 0

    def interval_preamble(self) -> dict[str, object]:
        """The ``# key=value`` lines saying how a CSV's ci_low/ci_high were computed."""
        out: dict[str, object] = {"interval": self.interval, "level": LEVEL}
        if self.interval == "bootstrap":
            out |= {"bootstrap_trials": self.trials, "bootstrap_seed": self.seed}
        return out

    def test_preamble(self) -> dict[str, object]:
        """The ``# key=value`` lines saying how a matrix's p-values were computed."""
        out: dict[str, object] = {"test": self.test, "alpha": ALPHA}
        if self.test == "tukey":
            out |= {"tukey_trials": self.trials, "tukey_seed": self.seed}
        return out


def check_test_config(*, interval: str, test: str, trials: int, seed: int) -> TestConfig:
    """Validate a configuration; raise ValueError."""
    if interval not in INTERVALS:
        raise ValueError(f"the interval must be one of {', '.join(INTERVALS)}")
    if test not in TESTS:
        raise ValueError(f"the test must be one of {', '.join(TESTS)}")
    if not 1 <= trials <= MAX_TRIALS:
        raise ValueError(f"the number of trials must be from 1 to {MAX_TRIALS}")
    if seed < 0:
        raise ValueError("the seed must be at least 0")
    return TestConfig(interval, test, int(trials), int(seed))


@dataclass(frozen=True, eq=False)
class MeanIntervals:
    """Per run (``runs``, the scores' order) and metric (``metrics``): the mean and the
    bounds of its 95% interval (``low``, ``high``: runs x metrics, NaN when there is none);
    ``problem`` says why there is none (fewer than two judged questions)."""

    config: TestConfig
    runs: tuple[str, ...]
    metrics: tuple[str, ...]
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    problem: str | None = None

    def bounds(self, run: str, metric: str) -> tuple[float, float]:
        i, k = self.runs.index(run), self.metrics.index(metric)
        return float(self.low[i, k]), float(self.high[i, k])


def score_intervals(scores: Scores, config: TestConfig) -> MeanIntervals:
    """The 95% interval of every run's mean on every metric of ``scores``: the t interval
    or the bootstrap percentile interval of ``config.trials`` samples drawn with
    ``config.seed`` (the same draws as the reliability page's for that seed and B)."""
    values = scores.values  # runs x metrics x questions
    nr, nm, nq = values.shape
    mean = scores.mean_values()
    low = np.full((nr, nm), np.nan)
    high = np.full((nr, nm), np.nan)
    if nq < 2:
        problem = "A confidence interval needs at least two judged questions."
        return MeanIntervals(config, scores.runs, scores.metrics, mean, low, high, problem)
    if config.interval == "bootstrap":
        problem = _too_much("bootstrap samples", config.trials, nr * nm * nq, MAX_BOOTSTRAP_WORK)
        if problem:
            return MeanIntervals(config, scores.runs, scores.metrics, mean, low, high, problem)
        boot = draw_bootstrap(nq, trials=config.trials, seed=config.seed)
    for k in range(nm):
        X = values[:, k, :]
        if config.interval == "bootstrap":
            lo, hi = bootstrap_intervals(X, boot, level=LEVEL)
        else:
            lo, hi = t_intervals(X, level=LEVEL)
        low[:, k], high[:, k] = lo, hi
    return MeanIntervals(config, scores.runs, scores.metrics, mean, low, high)


@dataclass(frozen=True, eq=False)
class PairTests:
    """The all-pairs test of one metric: ``p[i, j]`` the p-value of runs ``runs[i]`` and
    ``runs[j]`` (``runs`` in the order given, e.g. the ranking's; symmetric, NaN on the
    diagonal): Holm-corrected paired t-tests over every pair, or the randomised Tukey HSD
    (already corrected for all the pairs).  ``problem`` says why there is none."""

    config: TestConfig
    metric: str
    runs: tuple[str, ...]
    mean: np.ndarray
    p: np.ndarray
    problem: str | None = None

    @property
    def label(self) -> str:
        return TESTS[self.config.test]

    @property
    def pairs(self) -> int:
        return len(self.runs) * (len(self.runs) - 1) // 2

    def significant(self) -> np.ndarray:
        """Boolean matrix: p < 0.05."""
        with np.errstate(invalid="ignore"):
            return self.p < ALPHA


def pair_tests(
    scores: Scores, *, metric: str, order: Sequence[str], config: TestConfig
) -> PairTests:
    """Every pair of the runs ``order`` (names of ``scores.runs``) tested on ``metric``
    question by question, then the matrix is put in ``order``.  No p-value depends on
    the order of the runs: the Tukey HSD permutes them in the order of their names
    (``tukey_hsd``), as the reliability page does."""
    order = tuple(order)
    if sorted(order) != sorted(scores.runs):
        raise ValueError("the order must name every scored run once")
    k = scores.metrics.index(metric)
    X = scores.values[:, k, :]
    nr, nq = X.shape
    where = [scores.runs.index(r) for r in order]
    mean = X.mean(axis=1)[where] if nq else np.zeros(len(where))
    p = np.full((nr, nr), np.nan)
    problem = None
    if nr < 2:
        problem = "The tests compare runs: at least two are needed."
    elif nq < 2:
        problem = "The tests need at least two judged questions."
    elif config.test == "tukey":
        problem = _too_much("Tukey permutations", config.trials, nr * nq, MAX_TUKEY_WORK)
    if problem is None:
        if config.test == "tukey":
            flat = tukey_hsd(X, scores.runs, trials=config.trials, seed=config.seed)
        else:
            flat = holm(paired_t(X))
        x, y = run_pairs(nr)
        p[x, y] = flat
        p[y, x] = flat
    return PairTests(config, metric, order, mean, p[np.ix_(where, where)], problem)
