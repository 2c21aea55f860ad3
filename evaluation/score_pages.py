"""What the score pages and their CSV downloads share (runs, one run, compare, ranking,
scores per layer): the parameters a download refuses (400 with the reason, never a file of
the defaults' figures), the ``# key=value`` preamble of a score CSV, and how a mean, a
difference and an interval are written.  The parameters themselves come from one form
each (``ScoreConfigForm``, ``TestConfigForm``), as the API reads them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import wraps
from importlib.metadata import version
from typing import Any

import numpy as np
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotate.models import Collection
from evaluation.analysis.score_config import ScoreConfig
from evaluation.analysis.significance import MeanIntervals

from .forms import (
    INTERVAL_LABELS,
    TEST_LABELS,
    ScoreConfigForm,
    TestConfigForm,
    form_problems,
    metric_label,
)
from .selectors import level_gains

APP_VERSION = version("qasynset")


class BadParameters(Exception):
    """A download's query string holds an invalid score or test parameter: answered 400
    with the reason (``refuses_bad_parameters``), never computed with the defaults."""


def refuses_bad_parameters(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A CSV download view that answers 400 with the reason when ``checked`` refuses its
    parameters: a script asking for ``metric=rbp&rbp_p=1.5`` must not get a file of other
    figures."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParameters as e:
            return render(
                request,
                "400.html",
                {"reason": _("Invalid parameters: %(problems)s") % {"problems": e}},
                status=400,
            )

    return wrapper


def checked(form: ScoreConfigForm | TestConfigForm) -> Any:
    """A download's configuration: the form's, or BadParameters with its errors (the page
    shows them and the defaults' figures; a file would only mislead)."""
    if form.errors:
        raise BadParameters(form_problems(form))
    return form.config


def score_preamble(
    collection: Collection, config: ScoreConfig, **extra: object
) -> dict[str, object]:
    """The ``# key=value`` lines of a score CSV: what it was computed with."""
    gains = (
        config.gains
        if config.gains != "default"
        else ",".join(f"{c}={g:g}" for c, g in level_gains(collection))
    )
    changed = collection.judgments_changed_at
    return {
        "collection": collection.slug,
        "gains": gains,
        "beta": config.beta,
        "rbp_p": config.rbp_p,
        "matching": collection.matching_mode,
        "judgments_version": collection.judgment_version,
        "judgments_changed_at": changed.isoformat() if changed else "never",
        "app_version": APP_VERSION,
        **extra,
    }


def score_forms(
    request: HttpRequest, collection: Collection, **defaults: Any
) -> tuple[ScoreConfigForm, TestConfigForm]:
    """The score and test configuration forms of the query string, validated."""
    return (
        ScoreConfigForm.read(request.GET, collection, **defaults),
        TestConfigForm.read(request.GET),
    )


EDGE = 1e-9  # floating noise at 0 and 1 is not passing them
# the mark of an interval that passes 0 or 1 (a t interval: ``interval_note`` says why)
PASSES = "†"
T_NOTE = format_lazy(
    "{mark} {text}",
    mark=PASSES,
    text=gettext_lazy(
        "A t interval is the mean ± t·s/√n, symmetric and not clipped: where it passes "
        "0 or 1, beyond the metric's range, the mean is imprecise, not the score negative."
    ),
)


def passes_range(low: float, high: float) -> bool:
    """Whether an interval goes below 0 or above 1 (a t interval can; no score does)."""
    return bool(low < -EDGE or high > 1 + EDGE)


def interval(low: float, high: float) -> str:
    """A 95% interval as a page shows it, next to the mean: ``[0.4710, 0.5530]``, marked
    ``†`` when it passes 0 or 1 (``T_NOTE``)."""
    if math.isnan(low) or math.isnan(high):
        return ""
    text = f"[{low:.4f}, {high:.4f}]"
    return f"{text} {PASSES}" if passes_range(low, high) else text


def interval_note(intervals: MeanIntervals | None) -> str:
    """What the intervals on a page are (or why there are none); when one passes 0 or 1,
    that it is a t interval, not clipped (``T_NOTE``)."""
    if intervals is None:
        return ""
    if intervals.problem:
        return problem_text(intervals.problem)
    c = intervals.config
    if c.interval == "bootstrap":
        text = _(
            "In brackets: the 95%% %(interval)s of each mean over the questions "
            "(%(trials)s bootstrap samples, seed %(seed)s)."
        ) % {"interval": INTERVAL_LABELS[c.interval], "trials": c.trials, "seed": c.seed}
    else:
        text = _("In brackets: the 95%% %(interval)s of each mean over the questions.") % {
            "interval": INTERVAL_LABELS[c.interval]
        }
    with np.errstate(invalid="ignore"):
        passes = bool(np.any(intervals.low < -EDGE) or np.any(intervals.high > 1 + EDGE))
    return f"{text} {T_NOTE}" if passes else text


def test_label(test: str) -> str:
    """The name of an all-pairs test (``holm``, ``tukey``) in the page's language."""
    return str(TEST_LABELS.get(test, test))


# why there are no intervals or tests (evaluation.analysis.significance, which has no
# Django, says it in English): the page says it in its language
_PROBLEMS = {
    gettext_noop("A confidence interval needs at least two judged questions."),
    gettext_noop("The tests compare runs: at least two are needed."),
    gettext_noop("The tests need at least two judged questions."),
}
_TOO_MUCH = re.compile(
    r"(?P<trials>\d+) (?P<what>bootstrap samples|Tukey permutations) are too much work for "
    r"this many runs and questions(?:; choose at most (?P<fit>\d+) trials)?\.$"
)


def problem_text(problem: str | None) -> str | None:
    """Why a page has no intervals or tests, in the page's language (``None``: none)."""
    if not problem:
        return problem
    if problem in _PROBLEMS:
        return _(problem)
    too_much = _TOO_MUCH.match(problem)
    if too_much is None:
        return problem
    what = (
        _("bootstrap samples")
        if too_much["what"] == "bootstrap samples"
        else _("Tukey permutations")
    )
    values = {"trials": too_much["trials"], "what": what, "fit": too_much["fit"]}
    if values["fit"]:
        return (
            _(
                "%(trials)s %(what)s are too much work for this many runs and questions; "
                "choose at most %(fit)s trials."
            )
            % values
        )
    return _("%(trials)s %(what)s are too much work for this many runs and questions.") % values


def interval_columns(metrics: Sequence[str]) -> list[str]:
    """The CSV columns of the intervals: ``<metric>_ci_low``, ``<metric>_ci_high``."""
    return [f"{m}_{bound}" for m in metrics for bound in ("ci_low", "ci_high")]


def interval_cells(intervals: MeanIntervals | None, run: str, metrics: Sequence[str]) -> list:
    """The cells of ``interval_columns`` for ``run`` (empty without intervals)."""
    if intervals is None:
        return [None] * (2 * len(metrics))
    return [float(x) for m in metrics for x in intervals.bounds(run, m)]


def metric_choices(config: ScoreConfig) -> list[tuple[str, str]]:
    """The configured metrics with their labels, for the table headers."""
    return [(m, metric_label(m)) for m in config.metrics]


def fmt(v: float | None) -> str:
    """A figure with 4 decimals; a dash for none."""
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def signed(v: float) -> str:
    """A difference with its sign (``+0.1250``); a dash for none."""
    return "—" if math.isnan(v) else "0.0000" if v == 0 else f"{v:+.4f}"


class Undefined:
    """Why a table's undefined figures are undefined, in visible text: ``mark(reason)``
    gives the footnote letter the page writes beside the dash ("a", "b", one per reason),
    ``notes`` the letters and reasons the page lists under the table (the template
    ``evaluation/_why.html``), so a reader on a phone, with no hover, reads why."""

    def __init__(self) -> None:
        self._marks: dict[str, str] = {}

    def mark(self, reason: str) -> str:
        if reason not in self._marks:
            self._marks[reason] = "abcdefghijklmnopqrstuvwxyz"[len(self._marks) % 26]
        return self._marks[reason]

    @property
    def notes(self) -> list[tuple[str, str]]:
        return [(m, reason) for reason, m in self._marks.items()]
