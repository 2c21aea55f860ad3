"""Evaluation pages: runs, scores, comparisons.  Reads come from ``evaluation/selectors.py``,
scores, comparisons and rankings from ``evaluation/services.py``; the views only choose,
sort and page what to show, and every piece of markup is in the templates."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import wraps
from importlib.metadata import version
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.htmx import redirect_to, render_page
from config.ids import request_id
from evaluation import selectors, services
from evaluation.analysis.plots import difference_plot
from evaluation.analysis.significance import (
    INTERVALS,
    MeanIntervals,
    PairTests,
    TestConfig,
    check_test_config,
    score_intervals,
)
from evaluation.analysis.stats import format_p, p_text
from evaluation.forms import (
    RunReplaceForm,
    RunUploadForm,
    ScoreConfigForm,
    TestConfigForm,
    metric_label,
)
from evaluation.metrics import DEFAULT_METRICS, InputError, Scores
from evaluation.metrics.gains import DEFAULT_BETA, DEFAULT_RBP_P

from .exports import csv_precision, csv_response
from .models import Run

APP_VERSION = version("qasynset")
COMPARE_PAGE_SIZE = 100  # rows of the compare page's question table (the plot shows all)
DISAGREE_SHOWN = 20  # questions shown side by side where Q-measure and RR disagree


# -- helpers ------------------------------------------------------------------------------
def _score_access(request: HttpRequest, slug: str) -> tuple[Collection, str]:
    """Scores are for organizers and participants; assessors see none (403)."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request.user, collection, Role.ORGANIZER, Role.PARTICIPANT)
    return collection, role


def _config(
    request: HttpRequest, collection: Collection, default_metrics: Sequence[str] = DEFAULT_METRICS
) -> tuple[services.ScoreConfig, ScoreConfigForm, str | None]:
    """The score configuration from the query string (invalid parts fall back to the
    defaults, with the form's errors shown) and the form showing it."""
    form = ScoreConfigForm(request.GET or None)
    levels = [code for code, _ in selectors.level_gains(collection)]
    metrics, gains, beta, rbp_p = list(default_metrics), "default", DEFAULT_BETA, DEFAULT_RBP_P
    error = None
    if form.is_bound and form.is_valid():
        metrics = form.cleaned_data["metric"] or metrics
        gains = form.gain_spec()
        if form.cleaned_data["beta"] is not None:
            beta = form.cleaned_data["beta"]
        if form.cleaned_data["rbp_p"] is not None:
            rbp_p = form.cleaned_data["rbp_p"]
    try:
        config = services.check_config(
            metrics=metrics, gains=gains, beta=beta, rbp_p=rbp_p, levels=levels
        )
    except ValueError as e:
        error = str(e)
        config = services.check_config(
            metrics=default_metrics,
            gains="default",
            beta=DEFAULT_BETA,
            rbp_p=DEFAULT_RBP_P,
            levels=levels,
        )
    if form.is_bound and form.errors:
        return config, form, error
    return config, ScoreConfigForm.showing(config), error


class BadParameters(Exception):
    """A download's query string holds an invalid score or test parameter: answered 400
    with the reason (``refuses_bad_parameters``), never computed with the defaults."""


def refuses_bad_parameters(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A CSV download view that answers 400 with the reason when ``_csv_config`` or
    ``_csv_tests`` refuse its parameters: a script asking for ``metric=rbp&rbp_p=1.5``
    must not get a file of other figures."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParameters as e:
            return render(request, "400.html", {"reason": f"Invalid parameters: {e}"}, status=400)

    return wrapper


def _problems(form) -> str:
    """A bound form's errors as one line: ``rbp_p: ...; gains: ...``."""
    return "; ".join(
        m if field == "__all__" else f"{field}: {m}"
        for field, messages in form.errors.items()
        for m in messages
    )


def _csv_config(
    request: HttpRequest, collection: Collection, default_metrics: Sequence[str] = DEFAULT_METRICS
) -> services.ScoreConfig:
    """``_config`` for a download: an invalid parameter raises BadParameters (the pages
    show the form's errors and the defaults' figures; a file would only mislead)."""
    config, form, error = _config(request, collection, default_metrics)
    if form.is_bound and form.errors:
        raise BadParameters(_problems(form))
    if error:
        raise BadParameters(error)
    return config


def _csv_tests(request: HttpRequest) -> TestConfig:
    """``_tests`` for a download: an invalid parameter raises BadParameters."""
    config, form, error = _tests(request)
    if form.is_bound and form.errors:
        raise BadParameters(_problems(form))
    if error:
        raise BadParameters(error)
    return config


def _preamble(
    collection: Collection, config: services.ScoreConfig, **extra: object
) -> dict[str, object]:
    """The ``# key=value`` lines of a score CSV: what it was computed with."""
    gains = (
        config.gains
        if config.gains != "default"
        else ",".join(f"{c}={g:g}" for c, g in selectors.level_gains(collection))
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


def _tests(request: HttpRequest) -> tuple[TestConfig, TestConfigForm, str | None]:
    """How the intervals and pair tests are computed, from the query string (invalid
    parts fall back to the defaults, with the form's errors shown), and the form."""
    form = TestConfigForm(request.GET or None)
    default = TestConfig()
    config, error = default, None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            config = check_test_config(
                interval=data["interval"] or default.interval,
                test=data["test"] or default.test,
                trials=data["trials"] or default.trials,
                seed=data["seed"] if data["seed"] is not None else default.seed,
            )
        except ValueError as e:
            error = str(e)
    if form.is_bound and form.errors:
        return config, form, error
    return config, TestConfigForm.showing(config), error


def _interval(low: float, high: float) -> str:
    """A 95% interval as a page shows it, next to the mean: ``[0.4710, 0.5530]``."""
    if math.isnan(low) or math.isnan(high):
        return ""
    return f"[{low:.4f}, {high:.4f}]"


def _interval_note(intervals: MeanIntervals | None) -> str:
    """What the intervals on a page are (or why there are none)."""
    if intervals is None:
        return ""
    if intervals.problem:
        return intervals.problem
    c = intervals.config
    text = f"In brackets: the 95% {INTERVALS[c.interval]} of each mean over the questions"
    if c.interval == "bootstrap":
        text += f" ({c.trials} bootstrap samples, seed {c.seed})"
    return text + "."


def _interval_columns(metrics: Sequence[str]) -> list[str]:
    return [f"{m}_{bound}" for m in metrics for bound in ("ci_low", "ci_high")]


def _interval_cells(intervals: MeanIntervals | None, run: str, metrics: Sequence[str]) -> list:
    if intervals is None:
        return [None] * (2 * len(metrics))
    return [float(x) for m in metrics for x in intervals.bounds(run, m)]


def _matrix(pairs: PairTests | None) -> dict[str, Any] | None:
    """The all-pairs matrix as the ranking page shows it: runs in ranking order, each
    cell the pair's p-value (``format_p``) and whether it is below 5%."""
    if pairs is None:
        return None
    sig = pairs.significant()
    runs = [{"rank": i + 1, "name": name} for i, name in enumerate(pairs.runs)]
    rows = [
        {
            **run,
            "mean": _fmt(float(pairs.mean[i])),
            "cells": [
                {"p": "" if i == j else format_p(float(pairs.p[i, j])), "sig": bool(sig[i, j])}
                for j in range(len(pairs.runs))
            ],
        }
        for i, run in enumerate(runs)
    ]
    c = pairs.config
    return {
        "tests": pairs,
        "metric": metric_label(pairs.metric),
        "runs": runs,
        "rows": rows,
        "problem": pairs.problem,
        "significant": int(np.triu(sig, 1).sum()),
        "detail": (
            f"{c.trials} permutations, seed {c.seed}"
            if c.test == "tukey"
            else f"correction over the {pairs.pairs} pair{'s' if pairs.pairs != 1 else ''}"
        ),
    }


def _metric_choices(config: services.ScoreConfig) -> list[tuple[str, str]]:
    return [(m, metric_label(m)) for m in config.metrics]


def _fmt(v: float | None) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def _signed(v: float) -> str:
    return "—" if math.isnan(v) else "0.0000" if v == 0 else f"{v:+.4f}"


# -- runs page ----------------------------------------------------------------------------
@require_GET
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = selectors.visible_runs(user=request.user)
    return TemplateResponse(request, "evaluation/my_runs.html", {"runs": runs})


def _run_rows(
    request: HttpRequest, collection: Collection, config: services.ScoreConfig, tests: TestConfig
) -> tuple[list[dict[str, Any]], Scores | None, MeanIntervals | None]:
    """The runs page's rows (by name): each run, its means with their 95% intervals, the
    questions it answered and its unjudged answers; the scores and the intervals."""
    runs = list(selectors.visible_runs(user=request.user, collection=collection))
    scores = services.score_runs(collection, runs, config) if runs else None
    intervals = score_intervals(scores, tests) if scores else None
    stats = selectors.run_answer_stats(runs)
    unjudged = selectors.unjudged_counts(runs)
    means = scores.means() if scores else pd.DataFrame()
    rows = [
        {
            "run": r,
            "means": [
                (means.loc[r.name, m], _interval(*intervals.bounds(r.name, m)))
                for m in config.metrics
            ]
            if intervals
            else [],
            "bounds": _interval_cells(intervals, r.name, config.metrics),
            "questions": stats.get(r.pk, {}).get("questions", 0),
            "unjudged": unjudged.get(r.pk, 0),
        }
        for r in runs
    ]
    return rows, scores, intervals


@require_GET
def run_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    config, form, error = _config(request, collection)
    tests, tests_form, tests_error = _tests(request)
    rows, scores, intervals = _run_rows(request, collection, config, tests)
    runs = [row["run"] for row in rows]
    sort = request.GET.get("sort", "")
    if sort in config.metrics:
        i = config.metrics.index(sort)
        rows.sort(key=lambda row: -row["means"][i][0])
    elif sort == "name":
        rows.sort(key=lambda row: row["run"].name)
    return TemplateResponse(
        request,
        "evaluation/run_list.html",
        {
            "collection": collection,
            "role": role,
            "is_organizer": role == Role.ORGANIZER,
            "config": config,
            "form": form,
            "error": error,
            "metrics": _metric_choices(config),
            "tests_form": tests_form,
            "tests_error": tests_error,
            "interval_note": _interval_note(intervals),
            "rows": rows,
            "sort": sort,
            "judged_questions": scores.marked.judgments.nq if scores else 0,
            "can_upload": role == Role.ORGANIZER or collection.open_for_submissions,
            "can_compare": len(runs) >= 2,
            "withdrawn": selectors.withdrawn_runs(collection) if role == Role.ORGANIZER else [],
        },
    )


@require_GET
@refuses_bad_parameters
def run_list_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The runs page as CSV: per run (by name) its owner, means, their 95% intervals
    (``<metric>_ci_low``, ``<metric>_ci_high``; how, in the preamble), questions answered
    and unjudged answers."""
    collection, _ = _score_access(request, slug)
    config = _csv_config(request, collection)
    tests = _csv_tests(request)
    rows, _, _ = _run_rows(request, collection, config, tests)
    return csv_response(
        f"{collection.slug}-runs.csv",
        _preamble(collection, config, **tests.interval_preamble()),
        [
            "run",
            "owner",
            *config.metrics,
            *_interval_columns(config.metrics),
            "questions_answered",
            "unjudged_answers",
        ],
        [
            [
                row["run"].name,
                row["run"].owner.get_username(),
                *[float(mean) for mean, _ in row["means"]],
                *row["bounds"],
                row["questions"],
                row["unjudged"],
            ]
            for row in rows
        ],
        precision=csv_precision(request),
    )


@require_http_methods(["GET", "POST"])
def run_upload(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    if role != Role.ORGANIZER and not collection.open_for_submissions:
        raise PermissionDenied("This collection is not open for submissions.")
    issues = []
    posted = request.method == "POST"
    form = RunUploadForm(request.POST, request.FILES) if posted else RunUploadForm()
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            run = services.run_import(
                collection=collection,
                owner=request.user,
                name=form.cleaned_data["name"],
                data=upload.read(),
                filename=upload.name,
                description=form.cleaned_data["description"],
                fmt=form.cleaned_data["format"] or None,
            )
        except InputError as e:
            issues = e.issues
        else:
            messages.success(request, f"Run {run.name!r} uploaded: {run.answers.count()} answers.")
            return redirect_to(request, "evaluation:run-detail", collection.slug, run.pk)
    return render_page(
        request,
        "evaluation/run_upload.html",
        {
            "collection": collection,
            "form": form,
            "issues": issues,
            "max_mb": settings.RUN_UPLOAD_MAX_MB,
        },
        partial="upload-form",
    )


# -- one run ------------------------------------------------------------------------------
def _question_table(collection: Collection, scores: Scores, run: Run) -> pd.DataFrame:
    """Per judged question: L (answers of the run), R (synsets) and each metric."""
    pq = scores.per_question[run.name].copy()
    lengths = selectors.answers_per_question(run)
    synsets = selectors.synsets_per_question(collection)
    pq.insert(0, "R", [synsets.get(q, 0) for q in pq.index])
    pq.insert(0, "L", [lengths.get(q, 0) for q in pq.index])
    return pq


@require_GET
def run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, role = _score_access(request, slug)
    run = selectors.visible_run(user=request.user, collection=collection, run_id=run_id)
    config, form, error = _config(request, collection)
    scores = services.score_runs(collection, [run], config)
    table = _question_table(collection, scores, run)
    texts = selectors.question_texts(collection)
    search = request.GET.get("q", "").strip()
    if search:
        s = search.casefold()
        keep = [q for q in table.index if s in q.casefold() or s in texts.get(q, "").casefold()]
        table = table.loc[keep]
    if request.GET.get("below") in {"1", "on"}:
        table = table[table[config.metrics[0]] < 1.0]
    sort = request.GET.get("sort", "")
    if sort in table.columns:
        table = table.sort_values(sort, ascending=request.GET.get("order") == "asc", kind="stable")
    page = Paginator(list(table.index), 50).get_page(request.GET.get("page"))
    marks = selectors.marks_by_question(scores, run.name, page.object_list, collection=collection)
    rows = [
        {
            "qid": q,
            "text": texts.get(q, ""),
            "L": int(table.at[q, "L"]),
            "R": int(table.at[q, "R"]),
            "values": [table.at[q, m] for m in config.metrics],
            "marks": marks.get(q, []),
        }
        for q in page.object_list
    ]
    means = scores.means().loc[run.name]
    unjudged = selectors.unjudged_answers(run)
    return render_page(
        request,
        "evaluation/run_detail.html",
        {
            "collection": collection,
            "role": role,
            "run": run,
            "config": config,
            "form": form,
            "error": error,
            "metrics": _metric_choices(config),
            "means": [means[m] for m in config.metrics],
            "rows": rows,
            "page": page,
            "judged": len(scores.per_question[run.name]),
            "shown": len(table),
            "not_judged": scores.unknown[run.name],
            "unjudged": unjudged,
            "pool": selectors.pool_counts(unjudged),
            "is_organizer": role == Role.ORGANIZER,
            "sort": sort,
            "search": search,
            "can_change": services.run_may_change(run, request.user),
            "history": selectors.run_history(run),
        },
        partial="question-table",
    )


@require_POST
def run_pool(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request.user, collection, Role.ORGANIZER)
    run = get_object_or_404(Run.objects.active(), collection=collection, pk=run_id)
    added = services.run_pool(run=run, by=request.user)
    messages.success(
        request, f"{added} unjudged answer(s) of {run.name} sent to the assessors' pool."
    )
    return redirect_to(request, "evaluation:run-detail", collection.slug, run.pk)


def _changeable_run(request: HttpRequest, slug: str, run_id: int) -> tuple[Collection, Run]:
    """The run ``run_id`` if the user may withdraw or replace it (403 otherwise)."""
    collection, _ = _score_access(request, slug)
    run = selectors.visible_run(user=request.user, collection=collection, run_id=run_id)
    if not services.run_may_change(run, request.user):
        raise PermissionDenied(
            "Only the run's owner while the collection is open for "
            "submissions, or an organizer, may change this run."
        )
    return collection, run


@require_http_methods(["GET", "POST"])
def run_withdraw(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """GET: the confirm step; POST: withdraw the run (kept for the audit trail)."""
    collection, run = _changeable_run(request, slug, run_id)
    if request.method == "POST":
        services.run_withdraw(run=run, by=request.user)
        messages.success(request, f"Run {run.name!r} withdrawn.")
        return redirect_to(request, "evaluation:run-list", collection.slug)
    return TemplateResponse(
        request,
        "evaluation/run_withdraw.html",
        {"collection": collection, "run": run, "answers": run.answers.count()},
    )


@require_http_methods(["GET", "POST"])
def run_replace(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Replace the run's file, all or nothing (the checks of an upload)."""
    collection, run = _changeable_run(request, slug, run_id)
    issues = []
    posted = request.method == "POST"
    form = RunReplaceForm(request.POST, request.FILES) if posted else RunReplaceForm()
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            run = services.run_replace(
                run=run,
                data=upload.read(),
                filename=upload.name,
                by=request.user,
                fmt=form.cleaned_data["format"] or None,
            )
        except InputError as e:
            issues = e.issues
        else:
            messages.success(request, f"Run {run.name!r} replaced: {run.answers.count()} answers.")
            return redirect_to(request, "evaluation:run-detail", collection.slug, run.pk)
    return render_page(
        request,
        "evaluation/run_replace.html",
        {
            "collection": collection,
            "run": run,
            "form": form,
            "issues": issues,
            "max_mb": settings.RUN_UPLOAD_MAX_MB,
        },
        partial="replace-form",
    )


@require_GET
@refuses_bad_parameters
def run_scores_csv(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, _ = _score_access(request, slug)
    run = selectors.visible_run(user=request.user, collection=collection, run_id=run_id)
    config = _csv_config(request, collection)
    scores = services.score_runs(collection, [run], config)
    table = _question_table(collection, scores, run)
    means = scores.means().loc[run.name]
    rows = [
        [
            run.name,
            q,
            int(table.at[q, "L"]),
            int(table.at[q, "R"]),
            *[float(table.at[q, m]) for m in config.metrics],
        ]
        for q in table.index
    ]
    rows.append([run.name, "all", "", "", *[float(means[m]) for m in config.metrics]])
    return csv_response(
        f"{collection.slug}-{run.name}-scores.csv",
        _preamble(collection, config, run=run.name),
        ["run", "question_id", "L", "R", *config.metrics],
        rows,
        precision=csv_precision(request),
    )


# -- comparison -----------------------------------------------------------------------------
def _chosen_runs(
    request: HttpRequest, collection: Collection
) -> tuple[list[Run], Run | None, Run | None]:
    """The runs the user may see, and runs A and B from the query string (by default the
    first two); 403 for a run hidden from the user, 404 for one that does not exist."""
    visible = list(selectors.visible_runs(user=request.user, collection=collection))
    by_id = {str(r.pk): r for r in visible}
    a, b = request.GET.get("a"), request.GET.get("b")
    for x in (a, b):
        if x and x not in by_id:
            selectors.visible_run(
                user=request.user, collection=collection, run_id=request_id(x) or 0
            )
    if not a:
        a = next((k for k in by_id if k != b), None)
    if not b:
        b = next((k for k in by_id if k != a), None)
    return visible, by_id.get(a or ""), by_id.get(b or "")


def _compare_runs(
    collection: Collection, a: Run | None, b: Run | None, config: services.ScoreConfig
) -> services.Comparison | None:
    """The comparison of two different runs; None until two different runs are chosen."""
    if a is None or b is None or a == b:
        return None
    return services.runs_compare(collection=collection, run_a=a, run_b=b, config=config)


def _question_link(request: HttpRequest) -> Callable[[str], str]:
    """``href(qid)``: this page showing both ranked lists of question ``qid``."""
    params = request.GET.copy()
    params.pop("question", None)
    base = f"?{params.urlencode()}&question=" if params else "?question="

    def href(qid: str) -> str:
        q = quote(qid, safe="")
        return f"{base}{q}#side-{q}"

    return href


def _compare_context(
    request: HttpRequest, collection: Collection, c: services.Comparison
) -> dict[str, Any]:
    """What the comparison part of the page shows (all values formatted here, all markup
    in the template)."""
    texts = selectors.question_texts(collection)
    href = _question_link(request)
    labels = {m: metric_label(m) for m in c.metrics}
    focus = request.GET.get("question")
    focus = focus if focus in c.diffs.index else None
    disagree = c.disagree_largest_first()[:DISAGREE_SHOWN]
    shown = [*disagree, *([focus] if focus else [])]
    marks = selectors.marks_of_runs(c.scores, [c.a.name, c.b.name], shown, collection=collection)
    marks_a, marks_b = marks[c.a.name], marks[c.b.name]

    def side(q: str) -> dict[str, Any]:
        return {
            "qid": q,
            "text": texts.get(q, ""),
            "d_q": c.diffs.at[q, c.q_metric],
            "d_rr": c.diffs.at[q, c.rr_metric],
            "marks_a": marks_a.get(q, []),
            "marks_b": marks_b.get(q, []),
        }

    page = Paginator(c.order, COMPARE_PAGE_SIZE).get_page(request.GET.get("page"))
    order = list(page.object_list)
    a_vals = c.per_question_a.loc[order].to_numpy().tolist() if order else []
    b_vals = c.per_question_b.loc[order].to_numpy().tolist() if order else []
    d_vals = c.diffs.loc[order].to_numpy().tolist() if order else []
    rows = []
    for q, va, vb, vd in zip(order, a_vals, b_vals, d_vals, strict=True):
        text = texts.get(q, "")
        rows.append(
            {
                "qid": q,
                "text": text if len(text) <= 60 else text[:59] + "…",
                "href": href(q),
                "cells": [
                    (f"{x:.4f}", f"{y:.4f}", _signed(d), "up" if d > 0 else "down" if d < 0 else "")
                    for x, y, d in zip(va, vb, vd, strict=True)
                ],
            }
        )
    return {
        "tests": [
            {
                "t": t,
                "label": labels[t.metric],
                "mean_a": _fmt(t.mean_a),
                "mean_b": _fmt(t.mean_b),
                "diff": _signed(t.mean_diff),
                "sign_p": format_p(t.sign_p),
                "wilcoxon_p": format_p(t.wilcoxon_p),
                "t_p": format_p(t.t_p),
                "rand_p": format_p(t.randomization_p),
                "effect": _fmt(t.effect_size),
            }
            for t in c.tests
        ],
        "plot": difference_plot(
            c.diffs,
            c.order,
            labels=labels,
            texts=texts,
            href=href,
            name_a=c.a.name,
            name_b=c.b.name,
        ),
        "n_questions": len(c.diffs),
        "diff_rows": rows,
        "page": page,
        "disagree": [side(q) for q in disagree],
        "disagree_total": len(c.disagree),
        "focus": side(focus) if focus and focus not in disagree else None,
        "q_label": labels[c.q_metric],
        "rr_label": labels[c.rr_metric],
    }


@require_GET
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    runs, a, b = _chosen_runs(request, collection)
    config, form, error = _config(request, collection, default_metrics=services.COMPARE_METRICS)
    comparison = _compare_runs(collection, a, b, config)
    context = {
        "collection": collection,
        "role": role,
        "runs": runs,
        "config": config,
        "form": form,
        "error": error,
        "metrics": _metric_choices(config),
        "a": a,
        "b": b,
        "same_run": a is not None and a == b,
    }
    if comparison:
        context.update(_compare_context(request, collection, comparison))
    return render_page(request, "evaluation/compare.html", context, partial="diff-table")


@require_GET
@refuses_bad_parameters
def compare_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = _score_access(request, slug)
    _, a, b = _chosen_runs(request, collection)
    config = _csv_config(request, collection, default_metrics=services.COMPARE_METRICS)
    c = _compare_runs(collection, a, b, config)
    if c is None:
        raise Http404("Choose two different runs to compare")
    rows: list[list[object]] = []
    for t in c.tests:
        rows.append(
            [
                "mean",
                t.metric,
                t.mean_a,
                t.mean_b,
                t.mean_diff,
                t.up,
                t.down,
                t.tied,
                p_text(t.sign_p),
                p_text(t.wilcoxon_p),
                p_text(t.t_p),
                p_text(t.randomization_p),
                t.effect_size,
            ]
        )
    for q in c.diffs.index:
        for m in c.metrics:
            rows.append(
                [
                    "question",
                    f"{m}:{q}",
                    c.per_question_a.at[q, m],
                    c.per_question_b.at[q, m],
                    c.diffs.at[q, m],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
    return csv_response(
        f"{collection.slug}-{c.a.name}-vs-{c.b.name}.csv",
        _preamble(collection, config, run_a=c.a.name, run_b=c.b.name),
        [
            "row",
            "metric_or_question",
            "a",
            "b",
            "b_minus_a",
            "up",
            "down",
            "tied",
            "sign_p",
            "wilcoxon_p",
            "t_p",
            "randomization_p",
            "effect_size",
        ],
        rows,
        precision=csv_precision(request),
    )


# -- system ranking -------------------------------------------------------------------------
def _system_ranking(
    request: HttpRequest,
    collection: Collection,
    config: services.ScoreConfig,
    tests: TestConfig,
    **parts: bool,
) -> services.SystemRanking:
    runs = selectors.visible_runs(user=request.user, collection=collection)
    return services.runs_rank(
        collection=collection, runs=list(runs), config=config, tests=tests, **parts
    )


@require_GET
def ranking(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    config, form, error = _config(request, collection)
    tests, tests_form, tests_error = _tests(request)
    r = _system_ranking(request, collection, config, tests)
    iv = r.intervals
    table = [
        {
            "run": run,
            "values": [
                (
                    r.means.at[run.name, m],
                    int(r.ranks.at[run.name, m]),
                    _interval(*iv.bounds(run.name, m)) if iv else "",
                )
                for m in r.metrics
            ],
        }
        for run in r.order
    ]
    corr = r.correlations.itertuples() if r.correlations is not None else ()
    return TemplateResponse(
        request,
        "evaluation/ranking.html",
        {
            "collection": collection,
            "role": role,
            "config": config,
            "form": form,
            "error": error,
            "metrics": _metric_choices(config),
            "tests_form": tests_form,
            "tests_error": tests_error,
            "show_test": True,
            "interval_note": _interval_note(iv),
            "matrix": _matrix(r.pairs),
            "table": table,
            "primary": metric_label(r.metrics[0]),
            "corr": [
                {
                    "a": metric_label(c.metric_a),
                    "b": metric_label(c.metric_b),
                    "tau": _fmt(c.kendall_tau),
                    "rho": _fmt(c.spearman_rho),
                }
                for c in corr
            ],
        },
    )


@require_GET
@refuses_bad_parameters
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = _score_access(request, slug)
    config = _csv_config(request, collection)
    tests = _csv_tests(request)
    r = _system_ranking(request, collection, config, tests, pairs=False)
    rows: list[list[object]] = [
        [
            run.name,
            *[float(r.means.at[run.name, m]) for m in r.metrics],
            *_interval_cells(r.intervals, run.name, r.metrics),
        ]
        for run in r.runs
    ]
    if r.correlations is not None:
        corr = list(r.correlations.itertuples())
        rows += [[f"kendall_tau:{c.metric_a}:{c.metric_b}", c.kendall_tau] for c in corr]
        rows += [[f"spearman_rho:{c.metric_a}:{c.metric_b}", c.spearman_rho] for c in corr]
    return csv_response(
        f"{collection.slug}-ranking.csv",
        _preamble(collection, config, **tests.interval_preamble()),
        ["run", *r.metrics, *_interval_columns(r.metrics)],
        rows,
        precision=csv_precision(request),
    )


@require_GET
@refuses_bad_parameters
def ranking_matrix_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The ranking page's all-pairs matrix as CSV: one row and one column per run in
    ranking order (``run``, ``mean``, then the p-value against each run; empty on the
    diagonal), the test and the metric in the preamble."""
    collection, _ = _score_access(request, slug)
    config = _csv_config(request, collection)
    tests = _csv_tests(request)
    r = _system_ranking(request, collection, config, tests, intervals=False)
    pairs = r.pairs
    names = [run.name for run in r.order]
    rows = []
    if pairs is not None:
        for i, name in enumerate(names):
            rows.append([name, float(pairs.mean[i]), *[p_text(float(p)) for p in pairs.p[i]]])
    return csv_response(
        f"{collection.slug}-ranking-matrix.csv",
        _preamble(collection, config, metric=r.metrics[0], **tests.test_preamble()),
        ["run", "mean", *names],
        rows,
        precision=csv_precision(request),
    )
