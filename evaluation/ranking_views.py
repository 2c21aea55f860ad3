"""The system ranking (each mean with its 95% interval, the all-pairs significance
matrix, Kendall's tau and Spearman's rho between metrics) and its two CSVs.  The figures
come from ``comparing.runs_rank``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET

from annotate.models import Collection
from evaluation import comparing, selectors
from evaluation.analysis.score_config import ScoreConfig
from evaluation.analysis.significance import PairTests, TestConfig
from evaluation.analysis.stats import format_p, format_resampled_p, p_text

from . import score_pages as pages
from .access import score_access
from .exports import csv_precision, csv_response
from .forms import metric_label

# runs of the all-pairs matrix the ranking page shows (the best-ranked): 100 runs are
# 10,000 cells, most of a second to render and no table to read; the CSV has every pair
MATRIX_RUNS = 40


def _matrix(pairs: PairTests | None) -> dict[str, Any] | None:
    """The all-pairs matrix as the ranking page shows it: runs in ranking order (the
    first ``MATRIX_RUNS``), each cell the pair's p-value (``format_p``) and whether it is
    below 5%; the count of significant pairs is over every pair."""
    if pairs is None:
        return None
    sig = pairs.significant()
    c = pairs.config
    if c.test == "tukey":  # below its B permutations' resolution: "< 1/B"

        def shown(p: float) -> str:
            return format_resampled_p(p, c.trials)
    else:
        shown = format_p
    runs = [{"rank": i + 1, "name": name} for i, name in enumerate(pairs.runs[:MATRIX_RUNS])]
    why = pages.Undefined()

    def cell(i: int, j: int) -> dict[str, Any]:
        p = float(pairs.p[i, j])
        undefined = i != j and math.isnan(p)
        return {
            "p": "" if i == j else shown(p),
            "sig": bool(sig[i, j]),
            # a paired t-test of a difference the same on every question has no t
            "why": why.mark(_("the pair's difference is the same on every question: no test"))
            if undefined
            else "",
        }

    rows = [
        {
            **run,
            "mean": pages.fmt(float(pairs.mean[i])),
            "cells": [cell(i, j) for j in range(len(runs))],
        }
        for i, run in enumerate(runs)
    ]
    return {
        "tests": pairs,
        "metric": metric_label(pairs.metric),
        "runs": runs,
        "rows": rows,
        "test_label": pages.test_label(c.test),
        "problem": pages.problem_text(pairs.problem),
        "significant": int(np.triu(sig, 1).sum()),
        "why": why.notes,
        "shown": len(runs),
        "of": len(pairs.runs),
        "detail": (
            _("%(trials)s permutations, seed %(seed)s") % {"trials": c.trials, "seed": c.seed}
            if c.test == "tukey"
            else ngettext(
                "correction over the %(n)s pair", "correction over the %(n)s pairs", pairs.pairs
            )
            % {"n": pairs.pairs}
        ),
    }


# -- system ranking -------------------------------------------------------------------------
def _system_ranking(
    request: HttpRequest,
    collection: Collection,
    config: ScoreConfig,
    tests: TestConfig,
    **parts: bool,
) -> comparing.SystemRanking:
    runs = selectors.visible_runs(user=request.user, collection=collection)
    return comparing.runs_rank(
        collection=collection, runs=list(runs), config=config, tests=tests, **parts
    )


@require_GET
def ranking(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = score_access(request, slug)
    form, tests_form = pages.score_forms(request, collection)
    config, tests = form.config, tests_form.config
    r = _system_ranking(request, collection, config, tests)
    iv = r.intervals
    # plain dicts: a cell read from a DataFrame costs more than the whole row's lookups
    means, ranks = r.means.to_dict("index"), r.ranks.to_dict("index")
    table = [
        {
            "run": run,
            "values": [
                (
                    means[run.name][m],
                    int(ranks[run.name][m]),
                    pages.interval(*iv.bounds(run.name, m)) if iv else "",
                )
                for m in r.metrics
            ],
        }
        for run in r.order
    ]
    corr = r.correlations.itertuples() if r.correlations is not None else ()
    corr_why = pages.Undefined()

    def corr_mark(tau: float, rho: float) -> str:
        if not (math.isnan(tau) or math.isnan(rho)):
            return ""
        if len(r.order) < 2:
            return corr_why.mark(_("fewer than two runs: no ranking to correlate"))
        return corr_why.mark(_("one of the metrics gives every run the same mean: no ranking"))

    return TemplateResponse(
        request,
        "evaluation/ranking.html",
        {
            "collection": collection,
            "role": role,
            "config": config,
            "form": form.shown(),
            "metrics": pages.metric_choices(config),
            "tests_form": tests_form.shown(),
            "show_test": True,
            "interval_note": pages.interval_note(iv),
            "matrix": _matrix(r.pairs),
            "table": table,
            "primary": metric_label(r.metrics[0]),
            "corr": [
                {
                    "a": metric_label(c.metric_a),
                    "b": metric_label(c.metric_b),
                    "key_a": c.metric_a,
                    "key_b": c.metric_b,
                    "tau": pages.fmt(c.kendall_tau),
                    "rho": pages.fmt(c.spearman_rho),
                    "why": corr_mark(c.kendall_tau, c.spearman_rho),
                }
                for c in corr
            ],
            "corr_why": corr_why.notes,
        },
    )


@require_GET
@pages.refuses_bad_parameters
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = score_access(request, slug)
    score_form, tests_form = pages.score_forms(request, collection)
    config, tests = pages.checked(score_form), pages.checked(tests_form)
    r = _system_ranking(request, collection, config, tests, pairs=False)
    rows: list[list[object]] = [
        [
            run.name,
            *[float(r.means.at[run.name, m]) for m in r.metrics],
            *pages.interval_cells(r.intervals, run.name, r.metrics),
        ]
        for run in r.runs
    ]
    if r.correlations is not None:
        corr = list(r.correlations.itertuples())
        rows += [[f"kendall_tau:{c.metric_a}:{c.metric_b}", c.kendall_tau] for c in corr]
        rows += [[f"spearman_rho:{c.metric_a}:{c.metric_b}", c.spearman_rho] for c in corr]
    return csv_response(
        f"{collection.slug}-ranking.csv",
        pages.score_preamble(collection, config, **tests.interval_preamble()),
        ["run", *r.metrics, *pages.interval_columns(r.metrics)],
        rows,
        precision=csv_precision(request),
    )


@require_GET
@pages.refuses_bad_parameters
def ranking_matrix_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The ranking page's all-pairs matrix as CSV: one row and one column per run in
    ranking order (``run``, ``mean``, then the p-value against each run; empty on the
    diagonal), the test and the metric in the preamble."""
    collection, _ = score_access(request, slug)
    score_form, tests_form = pages.score_forms(request, collection)
    config, tests = pages.checked(score_form), pages.checked(tests_form)
    r = _system_ranking(request, collection, config, tests, intervals=False)
    pairs = r.pairs
    names = [run.name for run in r.order]
    rows = []
    if pairs is not None:
        for i, name in enumerate(names):
            rows.append([name, float(pairs.mean[i]), *[p_text(float(p)) for p in pairs.p[i]]])
    return csv_response(
        f"{collection.slug}-ranking-matrix.csv",
        pages.score_preamble(collection, config, metric=r.metrics[0], **tests.test_preamble()),
        ["run", "mean", *names],
        rows,
        precision=csv_precision(request),
    )
