"""Reliability of a collection's metrics (DESIGN.md section 10): the adapter from the
collection's judgments and runs to the engine's ``evaluation.metrics.reliability``, and
the geometry of the curves the page draws as SVG.

Reads only: the runs are scored by the engine (``services.collection_judgments`` and
``services.run_ranking``) and samples are drawn from the configuration's seed.  A report
of a campaign's size takes minutes, so it is computed by a background job
(``reliability_jobs``), which keeps it for the page: ``reliability_key`` names it (the
collection, its judgment version, the runs and the configuration) and
``reliability_dump`` / ``reliability_load`` write and read it (an ``.npz`` file: numpy's
own format, read without pickle)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version

import numpy as np
from django.utils.translation import gettext, gettext_noop

from annotate.models import Collection
from evaluation import services
from evaluation.analysis.stats import format_p, format_resampled_p
from evaluation.metrics import parse_gains, parse_metrics
from evaluation.metrics.reliability.bootstrap import ALPHA, Discrimination
from evaluation.metrics.reliability.comparisons import Intervals, kendall_tau
from evaluation.metrics.reliability.figures import (
    MetricReliability,
    Report,
    reliability_report,
    score_matrices,
)
from evaluation.metrics.reliability.pairs import run_pairs
from evaluation.metrics.reliability.samples import Samples, draw_samples
from evaluation.metrics.reliability.samples_csv import iter_samples_csv
from evaluation.metrics.reliability.stability import Stability
from evaluation.metrics.reliability.swaps import SWAP_LEVEL, Swaps

from .models import Run

#: metrics of the summary table (the paper's Tables 2-3 compare metrics like these)
SUMMARY_METRICS = (
    "q_measure",
    "r_measure",
    "ap",
    "ap_rigid",
    "awp",
    "r_prec",
    "rr",
    "ndcg",
    "ndcg@5",
    "p@5",
    "rbp",
)
#: the gain profiles of the paper's section 4.5, against the collection's own gains
GAIN_PROFILES = ("default", "3:2:1", "1:1:1", "10:5:1", "adjusted")
MAX_TRIALS = 5000


@dataclass(frozen=True)
class ReliabilityConfig:
    """What the reliability page is computed with (kept in the URL)."""

    metric: str = "q_measure"
    gains: str = "default"
    trials: int = 1000
    subset_size: int | None = None
    seed: int = 0

    def key(self) -> str:
        return f"{self.metric}|{self.gains}|{self.trials}|{self.subset_size}|{self.seed}"


def check_reliability_config(
    *,
    metric: str,
    gains: str,
    trials: int,
    subset_size: int | None,
    seed: int,
    levels: Sequence[str],
) -> ReliabilityConfig:
    """Validate a configuration against a collection's levels; raise ValueError."""
    (name,) = parse_metrics([metric])
    profile = parse_gains(None if gains == "default" else gains)
    profile.resolve(tuple(levels), [1.0] * len(levels))  # raises on a mismatch
    if not 1 <= trials <= MAX_TRIALS:
        raise ValueError(
            gettext("the number of trials must be from 1 to %(most)s") % {"most": MAX_TRIALS}
        )
    if subset_size is not None and subset_size < 1:
        raise ValueError(gettext("the subset size must be at least 1"))
    return ReliabilityConfig(name, gains, int(trials), subset_size, int(seed))


@dataclass(frozen=True, eq=False)
class Reliability:
    """A computed page: ``detail`` for the chosen metric and gains (with the all-pairs
    tests), ``summary`` rows over SUMMARY_METRICS under the chosen gains, ``taus`` of the
    chosen metric's ranking under each gain profile against the collection's own gains,
    ``report`` holding all of it for the CSV tables; ``problem`` says why nothing could be
    computed (fewer than two runs or judged questions, a subset size too large)."""

    config: ReliabilityConfig
    runs: tuple[str, ...] = ()
    questions: int = 0
    samples: Samples | StoredSamples | None = None
    detail: MetricReliability | None = None
    summary: list[dict] = field(default_factory=list)
    taus: list[dict] = field(default_factory=list)
    report: Report | None = None
    problem: str | None = None


def _profile(gains: str):
    return parse_gains(None if gains == "default" else gains)


def _preamble(collection: Collection, config: ReliabilityConfig) -> dict[str, object]:
    return {
        "collection": collection.slug,
        "metric": config.metric,
        "gains": config.gains,
        "matching": collection.matching_mode,
        "judgments_version": collection.judgment_version,
        "app_version": version("qasynset"),
    }


def _samples(questions: Sequence[str], config: ReliabilityConfig) -> Samples:
    return draw_samples(
        questions, trials=config.trials, subset_size=config.subset_size, seed=config.seed
    )


def reliability_key(
    *, collection: Collection, runs: Sequence[Run], config: ReliabilityConfig
) -> str:
    """The name of a report: its collection, the state of its judgments, its runs (each
    file's hash) and its configuration."""
    return hashlib.sha256(
        repr(
            (
                "reliability:v3",
                collection.pk,
                services.judgment_stamp(collection),
                [(r.pk, r.sha256) for r in runs],
                config.key(),
            )
        ).encode()
    ).hexdigest()


def collection_reliability(
    *, collection: Collection, runs: Sequence[Run], config: ReliabilityConfig
) -> Reliability:
    """The report computed now, in this process (``compute_reliability`` without
    progress): for small inputs and tests; the page reads the stored one."""
    return compute_reliability(collection=collection, runs=runs, config=config)


def reliability_work(*, runs: int, questions: int, config: ReliabilityConfig) -> int:
    """A measure of a report's work: run pairs x questions x trials (the paired bootstrap,
    for each metric, dominates)."""
    return runs * (runs - 1) // 2 * questions * config.trials


# what a long computation reports to (a job's progress): done, total, unit
Progress = Callable[[int, int | None, str | None], None]


def _no_progress(done: int, total: int | None = None, unit: str | None = None) -> None:
    return None


def compute_reliability(
    *,
    collection: Collection,
    runs: Sequence[Run],
    config: ReliabilityConfig,
    progress: Progress | None = None,
) -> Reliability:
    """The reliability of the collection's metrics over ``runs``: every figure of DESIGN.md
    section 10 for the chosen metric, the summary over ``SUMMARY_METRICS`` and Kendall's
    tau under each gain profile.  ``progress`` hears the runs read, then the bootstrap
    samples done (B for each metric), then the gain profiles scored."""
    progress = progress or _no_progress
    runs = list(runs)
    if len(runs) < 2:
        return Reliability(
            config,
            # kept in English with the report, shown in the page's language
            problem=gettext_noop(
                "Reliability compares runs: this collection needs at least two runs."
            ),
        )
    judgments = services.collection_judgments(collection)
    rankings = []
    progress(0, len(runs), "runs read")
    for i, r in enumerate(runs, start=1):
        rankings.append(services.run_ranking(r))
        progress(i, len(runs), "runs read")
    questions = [str(q) for q in judgments.questions]
    if len(questions) < 2:
        return Reliability(
            config, problem=gettext_noop("Reliability needs at least two judged questions.")
        )
    try:
        samples = _samples(questions, config)
    except ValueError as e:
        return Reliability(config, problem=str(e))
    names = tuple(r.name for r in rankings)
    profile = _profile(config.gains)
    metrics = list(dict.fromkeys([config.metric, *SUMMARY_METRICS]))
    matrices = score_matrices(judgments, rankings, metrics, [profile])
    chosen = (config.metric, profile.label)
    report_config = _preamble(collection, config)
    total = len(matrices) * config.trials
    progress(0, total, "bootstrap samples")
    # a metric at a time, so that the bar moves (each metric's figures stand alone)
    results: dict[tuple[str, str], MetricReliability] = {}
    for key in [chosen, *(k for k in matrices if k != chosen)]:
        one = reliability_report(
            {key: matrices[key]}, names, samples, tests=key == chosen, config=report_config
        )
        results.update(one.results)
        progress(len(results) * config.trials, total, "bootstrap samples")
    report = Report(names, samples, results, report_config)
    taus = []
    base = None
    progress(0, len(GAIN_PROFILES), "gain profiles")
    for i, gains in enumerate(GAIN_PROFILES, start=1):
        try:
            X = score_matrices(judgments, rankings, [config.metric], [_profile(gains)])
        except ValueError:  # a profile with fewer gains than the collection has levels
            continue
        finally:
            progress(i, len(GAIN_PROFILES), "gain profiles")
        means = next(iter(X.values())).mean(axis=1)
        base = means if base is None else base
        taus.append({"gains": gains, "tau": kendall_tau(base, means)})
    return Reliability(
        config,
        names,
        len(questions),
        samples,
        results[chosen],
        report.summary(),
        taus,
        report,
    )


# -- the stored report --------------------------------------------------------------------
@dataclass(frozen=True)
class StoredSamples:
    """What a stored report keeps of its samples: the figures the page and the tables'
    preambles name (the samples file draws the positions again from the seed)."""

    questions: tuple[str, ...]
    subset_size: int
    trials: int
    seed: int | None
    tukey_seed: int
    tukey_trials: int | None


_STORED = {
    cls.__name__: cls
    for cls in (
        ReliabilityConfig,
        MetricReliability,
        Stability,
        Swaps,
        Discrimination,
        Intervals,
        StoredSamples,
    )
}


def _small(a: np.ndarray) -> np.ndarray:
    """Counts in the smallest integer type that holds them (the stored report's size)."""
    if a.dtype.kind not in "iu" or not a.size:
        return a
    return a.astype(
        np.promote_types(np.min_scalar_type(int(a.min())), np.min_scalar_type(int(a.max())))
    )


def _encode(value, arrays: dict[str, np.ndarray]):
    """``value`` as JSON, its arrays put in ``arrays``."""
    if isinstance(value, np.ndarray):
        name = f"a{len(arrays)}"
        arrays[name] = _small(value)
        return {"__array__": name}
    if isinstance(value, np.generic):
        return value.item()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__type__": type(value).__name__,
            "fields": {
                f.name: _encode(getattr(value, f.name), arrays) for f in dataclasses.fields(value)
            },
        }
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return [_encode(v, arrays) for v in value]
    if isinstance(value, dict):
        return {"__items__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in value.items()]}
    return value


def _decode(value, arrays):
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        a = arrays[value["__array__"]]
        return a.astype(np.int64) if a.dtype.kind in "iu" else a
    if "__tuple__" in value:
        return tuple(_decode(v, arrays) for v in value["__tuple__"])
    if "__items__" in value:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in value["__items__"]}
    cls = _STORED[value["__type__"]]  # these classes only: a KeyError for any other
    return cls(**{k: _decode(v, arrays) for k, v in value["fields"].items()})


def reliability_dump(page: Reliability) -> bytes:
    """A computed report as an ``.npz`` file: its arrays, and its structure as JSON in the
    array ``__report__``."""
    arrays: dict[str, np.ndarray] = {}
    s = page.samples
    stored = (
        None
        if s is None
        else StoredSamples(
            s.questions, s.subset_size, s.trials, s.seed, s.tukey_seed, s.tukey_trials
        )
    )
    skeleton = {
        "config": _encode(page.config, arrays),
        "runs": list(page.runs),
        "questions": page.questions,
        "samples": _encode(stored, arrays),
        "detail": _encode(page.detail, arrays),
        "summary": _encode(page.summary, arrays),
        "taus": _encode(page.taus, arrays),
        "problem": page.problem,
        "report": None
        if page.report is None
        else {
            "results": _encode(page.report.results, arrays),
            "config": _encode(page.report.config, arrays),
        },
    }
    text = json.dumps(skeleton, allow_nan=True).encode()
    buf = io.BytesIO()
    np.savez_compressed(buf, __report__=np.frombuffer(text, dtype=np.uint8), **arrays)
    return buf.getvalue()


def reliability_load(data: bytes, *, report: bool = True) -> Reliability:
    """A report ``reliability_dump`` wrote, read without pickle (without the tables'
    figures of the other metrics unless ``report``: the page shows the chosen metric's)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        skeleton = json.loads(bytes(arrays["__report__"]).decode())
        runs = tuple(skeleton["runs"])
        samples = _decode(skeleton["samples"], arrays)
        stored = skeleton["report"]
        return Reliability(
            _decode(skeleton["config"], arrays),
            runs,
            skeleton["questions"],
            samples,
            _decode(skeleton["detail"], arrays),
            _decode(skeleton["summary"], arrays),
            _decode(skeleton["taus"], arrays),
            None
            if stored is None or not report
            else Report(
                runs,
                samples,
                _decode(stored["results"], arrays),
                _decode(stored["config"], arrays),
            ),
            skeleton["problem"],
        )


def samples_csv(*, collection: Collection, config: ReliabilityConfig) -> Iterator[str]:
    """The samples file of the page's configuration, in pieces (the same seed draws the
    same samples: ``manage.py reliability --samples-in`` recomputes the page's figures
    from it)."""
    judgments = services.collection_judgments(collection)
    return iter_samples_csv(_samples([str(q) for q in judgments.questions], config))


# -- curves ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Frame:
    """A plot's box: width and height in pixels, inner padding, axis ranges."""

    width: int = 440
    height: int = 280
    pad: int = 44
    xmax: float = 1.0
    ymax: float = 1.0

    def x(self, v: float) -> float:
        return round(self.pad + (self.width - 2 * self.pad) * v / self.xmax, 1)

    def y(self, v: float) -> float:
        return round(self.height - self.pad - (self.height - 2 * self.pad) * v / self.ymax, 1)


def _nice(v: float) -> float:
    """The smallest of 0.05, 0.1, 0.2, 0.5, 1 (then tens) at or above ``v``."""
    for step in (0.05, 0.1, 0.2, 0.5, 1.0):
        if v <= step:
            return step
    return float(10 ** math.ceil(math.log10(v)))


def _plot(
    points,
    frame: Frame,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    xticks: Sequence[float],
    yticks: Sequence[float],
    level: float | None = None,
    xfmt: str = "{:g}",
    yfmt: str = "{:g}",
) -> dict:
    pts = [{"x": frame.x(x), "y": frame.y(y), "label": label} for x, y, label in points]
    return {
        "title": title,
        "xlabel": xlabel,
        "ylabel": ylabel,
        "width": frame.width,
        "height": frame.height,
        "left": frame.pad,
        "right": frame.width - frame.pad,
        "top": frame.pad,
        "bottom": frame.height - frame.pad,
        "mid_x": frame.width / 2,
        "points": pts,
        "polyline": " ".join(f"{p['x']},{p['y']}" for p in pts),
        "xticks": [{"x": frame.x(t), "label": xfmt.format(t)} for t in xticks],
        "yticks": [{"y": frame.y(t), "label": yfmt.format(t)} for t in yticks],
        "level": None if level is None or level > frame.ymax else frame.y(level),
    }


def _asl(p: float, trials: int | None) -> str:
    return format_resampled_p(p, trials) if trials else format_p(p)


def curves(detail: MetricReliability, *, trials: int | None = None) -> list[dict]:
    """The three curves of the chosen metric: minority rate against the proportion of
    ties over the fuzziness values (paper Figures 3-4), the swap rate per difference bin
    (Tables 2-3 are read off it) and the bootstrap ASLs of the run pairs, sorted (each
    point's title "< 1/B" below the resolution of the ``trials`` bootstrap samples)."""
    st = detail.stability
    mr, ties = st.minority_rate, st.ties
    ok = ~(np.isnan(mr) | np.isnan(ties))
    ymax = _nice(float(mr[ok].max()) if ok.any() else 0.05)
    stability = _plot(
        [
            (
                float(t),
                float(m),
                gettext("f=%(f)s: ties %(ties)s, minority %(minority)s")
                % {"f": f"{f:g}", "ties": f"{t:.3f}", "minority": f"{m:.4f}"},
            )
            for f, t, m in zip(st.fuzziness[ok], ties[ok], mr[ok], strict=True)
        ],
        Frame(xmax=1.0, ymax=ymax),
        title=gettext("Stability"),
        xlabel=gettext("proportion of ties"),
        ylabel=gettext("minority rate"),
        xticks=(0, 0.25, 0.5, 0.75, 1),
        yticks=[ymax * k / 4 for k in range(5)],
        level=SWAP_LEVEL,
    )
    sw = detail.swaps
    rate = sw.rate
    swap = _plot(
        [
            (
                float(e),
                float(r),
                gettext("%(bin)s ≤ d: swap rate %(rate)s of %(count)s")
                % {"bin": f"{e:.2f}", "rate": f"{r:.3f}", "count": int(c)},
            )
            for e, r, c in zip(sw.edges, rate, sw.counter, strict=True)
            if not np.isnan(r)
        ],
        Frame(xmax=0.2, ymax=1.0),
        title=gettext("Swap rate"),
        xlabel=gettext("difference bin"),
        ylabel=gettext("swap rate"),
        xticks=(0, 0.05, 0.1, 0.15, 0.2),
        yticks=(0, 0.25, 0.5, 0.75, 1),
        level=SWAP_LEVEL,
        xfmt="{:.2f}",
    )
    asl = detail.discrimination.curve
    n = len(asl)
    asl_plot = _plot(
        [
            (
                i + 1,
                float(a),
                gettext("pair %(n)s: ASL %(asl)s") % {"n": i + 1, "asl": _asl(float(a), trials)},
            )
            for i, a in enumerate(asl)
        ],
        Frame(xmax=max(n, 1), ymax=1.0),
        title=gettext("Bootstrap ASL"),
        xlabel=gettext("run pairs (sorted)"),
        ylabel="ASL",
        xticks=sorted({1, max(1, n // 2), max(n, 1)}),
        yticks=(0, 0.25, 0.5, 0.75, 1),
        level=ALPHA,
        xfmt="{:d}",
    )
    return [stability, swap, asl_plot]


def pair_rows(page: Reliability) -> list[dict]:
    """The chosen metric's run pairs: difference of means, ASL and the three p-values."""
    d = page.detail
    if d is None:
        return []
    x, y = run_pairs(len(page.runs))
    m = d.intervals.mean
    return [
        {
            "a": page.runs[i],
            "b": page.runs[j],
            "diff": float(m[i] - m[j]),
            "asl": float(d.discrimination.asl[k]),
            "p_t": float(d.p_t[k]),
            "p_holm": float(d.p_holm[k]),
            "p_tukey": float(d.p_tukey[k]),
        }
        for k, (i, j) in enumerate(zip(x.tolist(), y.tolist(), strict=True))
    ]


def run_rows(page: Reliability) -> list[dict]:
    """The chosen metric's runs, best first, with their 95% t and bootstrap intervals."""
    d = page.detail
    if d is None:
        return []
    iv = d.intervals
    rows = [
        {
            "run": run,
            "mean": float(iv.mean[i]),
            "t_low": float(iv.t_low[i]),
            "t_high": float(iv.t_high[i]),
            "boot_low": float(iv.boot_low[i]),
            "boot_high": float(iv.boot_high[i]),
            # a t interval passing 0 or 1 is marked, with a note under the table
            "t_passes": bool(iv.t_low[i] < -1e-9 or iv.t_high[i] > 1 + 1e-9),
        }
        for i, run in enumerate(page.runs)
    ]
    return sorted(rows, key=lambda r: -r["mean"])
