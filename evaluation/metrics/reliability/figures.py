"""The reliability report: every figure of DESIGN.md section 10 for one metric's (runs x
questions) matrix (``metric_reliability``), then for every metric under every gain
profile, with Kendall's tau of each profile's ranking against the collection's default
(robustness to gains; ``reliability_report`` over ``score_matrices``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..columns import DEFAULT_BETA, DEFAULT_RBP_P
from ..data import Judgments, Ranking
from ..engine import evaluate
from ..gains import GainProfile
from .bootstrap import Discrimination, bootstrap_asl
from .comparisons import Intervals, holm, kendall_tau, mean_intervals, paired_t, tukey_hsd
from .pairs import pair_map, run_order
from .samples import Samples
from .stability import FUZZINESS, Stability, stability
from .swaps import Swaps, swap_rates


@dataclass(frozen=True, eq=False)
class MetricReliability:
    """Everything of section 10 for one metric under one gain profile."""

    metric: str
    gains: str
    stability: Stability
    swaps: Swaps
    discrimination: Discrimination
    intervals: Intervals
    p_t: np.ndarray
    p_holm: np.ndarray
    p_tukey: np.ndarray
    tau: float = float("nan")


def metric_reliability(
    X: np.ndarray,
    samples: Samples,
    *,
    runs: Sequence[str],
    metric: str = "",
    gains: str = "",
    fuzziness: Sequence[float] = FUZZINESS,
    tests: bool = True,
) -> MetricReliability:
    """Stability, swap rates, bootstrap ASLs, intervals and all-pairs tests of ``X``
    (runs x questions, rows named by ``runs``, columns in ``samples.questions`` order);
    with ``tests=False`` the paired t, Holm and Tukey p-values are left NaN (a summary
    over many metrics; the Tukey HSD makes ``samples.tukey_trials`` permutations from
    ``samples.tukey_seed``).  Everything is computed on the rows sorted by run name
    (``run_order``), then put back in the order given: the figures of a named run or
    pair are the same, to the last bit, whatever the order of the runs."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(samples.questions):
        raise ValueError(
            f"the score matrix has shape {X.shape}; the samples are for "
            f"{len(samples.questions)} questions"
        )
    if len(runs) != len(X):
        raise ValueError(f"{len(X)} rows of scores but {len(runs)} run names")
    if not np.isfinite(X).all():
        raise ValueError("the scores must be finite")
    order = run_order(runs)
    names = [str(runs[i]) for i in order]
    X = X[order]
    nan = np.full(len(X) * (len(X) - 1) // 2, np.nan)
    p_t = paired_t(X) if tests else nan
    ind = samples.indicators
    r = MetricReliability(
        metric,
        gains,
        stability(X, samples.stability, fuzziness, indicator=ind["stability"]),
        swap_rates(X, samples.swap, indicators=(ind["swap0"], ind["swap1"])),
        bootstrap_asl(X, samples.bootstrap, indicator=ind["bootstrap"]),
        mean_intervals(X, samples.bootstrap, indicator=ind["bootstrap"]),
        p_t,
        holm(p_t) if tests else nan,
        tukey_hsd(X, names, trials=samples.tukey_trials, seed=samples.tukey_seed) if tests else nan,
    )
    return _in_order(r, order)


def _in_order(r: MetricReliability, order: np.ndarray) -> MetricReliability:
    """``r``, computed on the rows ``X[order]``, for the rows of X: per-run figures
    moved back, per-pair figures picked (GT counts exchanged for a pair turned round);
    the swap rates are over every pair and stay."""
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    k, turned = pair_map(order)
    st, iv = r.stability, r.intervals
    t = turned[:, None]
    return MetricReliability(
        r.metric,
        r.gains,
        Stability(
            st.fuzziness,
            np.where(t, st.gt_yx[k], st.gt_xy[k]),
            np.where(t, st.gt_xy[k], st.gt_yx[k]),
            st.eq[k],
        ),
        r.swaps,
        Discrimination(
            r.discrimination.asl[k],
            r.discrimination.alpha,
            None if r.discrimination.difference is None else r.discrimination.difference[k],
        ),
        Intervals(
            iv.mean[pos],
            iv.t_low[pos],
            iv.t_high[pos],
            iv.boot_low[pos],
            iv.boot_high[pos],
            iv.level,
        ),
        r.p_t[k],
        r.p_holm[k],
        r.p_tukey[k],
        r.tau,
    )


@dataclass(frozen=True, eq=False)
class Report:
    """Per (metric, gain label): a MetricReliability; ``runs`` and ``samples`` used."""

    runs: tuple[str, ...]
    samples: Samples
    results: dict[tuple[str, str], MetricReliability] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)

    def summary(self) -> list[dict[str, object]]:
        """One row per (metric, gains), sorted by discrimination as in the paper's
        Tables 2-3: the share of comparisons reaching the 5%-swap difference, then the
        share of pairs significant by the bootstrap (both descending), then the relative
        5%-swap difference (ascending: the metric that needs the smaller difference for
        its scores discriminates better; none last), then by name."""
        rows = []
        for (metric, gains), r in self.results.items():
            rows.append(
                {
                    "metric": metric,
                    "gains": gains,
                    "swap_threshold": r.swaps.threshold,
                    "bootstrap_difference": r.discrimination.required_difference,
                    "swap_relative": r.swaps.relative,
                    "swap_share": r.swaps.share,
                    "significant_share": r.discrimination.share_significant,
                    "ties_at_5pct_minority": r.stability.ties_at_minority(),
                    "tau_vs_default": r.tau,
                }
            )
        return sorted(
            rows,
            key=lambda row: (
                -_num(row["swap_share"]),
                -_num(row["significant_share"]),
                _num(row["swap_relative"], missing=math.inf),
                row["metric"],
                row["gains"],
            ),
        )


def _num(v, missing: float = -1.0) -> float:
    v = float(v)  # type: ignore[arg-type]
    return missing if np.isnan(v) else v


def reliability_report(
    matrices: Mapping[tuple[str, str], np.ndarray],
    runs: Sequence[str],
    samples: Samples,
    *,
    fuzziness: Sequence[float] = FUZZINESS,
    tests: bool = True,
    config: Mapping[str, object] | None = None,
) -> Report:
    """The report over every (metric, gain label) matrix; Kendall's tau of each metric's
    ranking (by mean) under each gain profile against its first gain profile (the
    collection's default)."""
    results: dict[tuple[str, str], MetricReliability] = {}
    first: dict[str, np.ndarray] = {}
    for (metric, gains), X in matrices.items():
        r = metric_reliability(
            X,
            samples,
            runs=runs,
            metric=metric,
            gains=gains,
            fuzziness=fuzziness,
            tests=tests,
        )
        means = r.intervals.mean
        tau = kendall_tau(first.setdefault(metric, means), means)
        results[(metric, gains)] = MetricReliability(
            r.metric,
            r.gains,
            r.stability,
            r.swaps,
            r.discrimination,
            r.intervals,
            r.p_t,
            r.p_holm,
            r.p_tukey,
            tau,
        )
    return Report(tuple(runs), samples, results, dict(config or {}))


def score_matrices(
    judgments: Judgments,
    rankings: Sequence[Ranking],
    metrics: Sequence[str],
    profiles: Sequence[GainProfile],
    *,
    beta: float = DEFAULT_BETA,
    rbp_p: float = DEFAULT_RBP_P,
) -> dict[tuple[str, str], np.ndarray]:
    """The (runs x questions) matrix of every metric under every gain profile (keys:
    (metric, profile label)), columns in judgment order, from the engine's ``evaluate``."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for profile in profiles:
        scores = evaluate(judgments, rankings, metrics, gains=profile, beta=beta, rbp_p=rbp_p)
        for k, metric in enumerate(scores.metrics):
            out[(metric, profile.label)] = scores.values[:, k, :]
    return out
