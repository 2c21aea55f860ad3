"""The runs pages: the runs of a collection with their means (and CSV), one run's
questions with its marked answers (and CSV), and a run's upload, replacement, withdrawal
and pooling (one run, or every run of the collection).  Who may do what:
``evaluation.access``; writes: ``evaluation.services``, the long ones as background jobs
(``evaluation.run_jobs``: a small one ends in the request, a large one's page shows its
progress)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import floatformat
from django.template.defaulttags import querystring
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.text import Truncator
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from evaluation import run_jobs, selectors, services
from evaluation.analysis.score_config import ScoreConfig
from evaluation.analysis.significance import MeanIntervals, TestConfig, score_intervals
from jobs.models import Job, JobStatus
from jobs.services import JobRefused
from jobs.views import job_started

from .access import (
    may_submit,
    require_may_change,
    require_may_submit,
    run_may_change,
    score_access,
    visible_run,
)
from .exports import csv_precision, csv_response
from .forms import RunReplaceForm, RunUploadForm, ScoreConfigForm
from .models import Run
from .score_pages import (
    checked,
    interval,
    interval_cells,
    interval_columns,
    interval_note,
    metric_choices,
    refuses_bad_parameters,
    score_forms,
    score_preamble,
)
from .score_store import StoredScores

# distinct unjudged answers the run page lists (the counts above the list count them all)
UNJUDGED_SHOWN = 200


# -- runs page ----------------------------------------------------------------------------
@require_GET
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = selectors.visible_runs(user=request.user)
    return TemplateResponse(request, "evaluation/my_runs.html", {"runs": runs})


def _run_rows(
    request: HttpRequest, collection: Collection, config: ScoreConfig, tests: TestConfig
) -> tuple[list[dict[str, Any]], StoredScores | None, MeanIntervals | None]:
    """The runs page's rows (by name): each run, its means with their 95% intervals, the
    questions it answered and its unjudged answers; the scores and the intervals."""
    runs = list(selectors.visible_runs(user=request.user, collection=collection))
    scores = services.score_runs(collection, runs, config) if runs else None
    intervals = score_intervals(scores, tests) if scores else None
    # plain dicts: a cell read from a DataFrame costs more than the whole row's lookups
    means = scores.means().to_dict("index") if scores else {}
    rows = [
        {
            "run": r,
            "means": [
                (means[r.name][m], interval(*intervals.bounds(r.name, m))) for m in config.metrics
            ]
            if intervals
            else [],
            "bounds": interval_cells(intervals, r.name, config.metrics),
            "questions": scores.counts[r.name].questions if scores else 0,
            "unjudged": scores.counts[r.name].unjudged if scores else 0,
        }
        for r in runs
    ]
    return rows, scores, intervals


@require_GET
def run_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = score_access(request, slug)
    form, tests_form = score_forms(request, collection)
    config, tests = form.config, tests_form.config
    rows, scores, intervals = _run_rows(request, collection, config, tests)
    runs = [row["run"] for row in rows]
    sort = request.GET.get("sort", "")
    if sort in config.metrics:
        i = config.metrics.index(sort)
        rows.sort(key=lambda row: -row["means"][i][0])
    elif sort == "name":
        rows.sort(key=lambda row: row["run"].name)
    # each row's links and figures written once here, as the template's tags and filters
    # write them ({% url %}{% querystring sort=None %}, floatformat:4): 100 rows of tags
    # and filters were most of the page's time
    keep = querystring(None, request.GET, sort=None)
    for row in rows:
        args = [collection.slug, row["run"].pk]
        row["href"] = reverse("evaluation:run-detail", args=args) + keep
        row["csv_href"] = reverse("evaluation:run-scores-csv", args=args) + keep
        row["cells"] = [(floatformat(v, 4), ci) for v, ci in row["means"]]
    return TemplateResponse(
        request,
        "evaluation/run_list.html",
        {
            "collection": collection,
            "role": role,
            "is_organizer": role == Role.ORGANIZER,
            "config": config,
            "form": form.shown(),
            "metrics": metric_choices(config),
            "tests_form": tests_form.shown(),
            "interval_note": interval_note(intervals),
            "rows": rows,
            "sort": sort,
            "judged_questions": len(scores.questions) if scores else 0,
            "can_upload": may_submit(request.user, collection),
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
    collection, _ = score_access(request, slug)
    score_form, tests_form = score_forms(request, collection)
    config, tests = checked(score_form), checked(tests_form)
    rows, _, _ = _run_rows(request, collection, config, tests)
    return csv_response(
        f"{collection.slug}-runs.csv",
        score_preamble(collection, config, **tests.interval_preamble()),
        [
            "run",
            "owner",
            *config.metrics,
            *interval_columns(config.metrics),
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


def _job_issues(job: Job) -> list[dict[str, object]]:
    """A failed job's errors as the upload and replace forms list them (every problem with
    its line); a failure without a list (a refusal, an internal error) as its message."""
    return job.errors or [{"file": job.input_name, "line": None, "message": job.message}]


@require_http_methods(["GET", "POST"])
def run_upload(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The upload form; a valid one starts the upload job (``run_jobs.run_upload``): a
    small file is stored at once (then the run's page, or the form with every problem of
    the file), a large one shows the job's progress in place of the form."""
    collection, _ = score_access(request, slug)
    require_may_submit(request.user, collection)
    issues: list[dict[str, object]] = []
    posted = request.method == "POST"
    form = RunUploadForm(request.POST, request.FILES) if posted else RunUploadForm()
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            job = run_jobs.run_upload_start(
                collection=collection,
                user=request.user,
                name=form.cleaned_data["name"],
                data=upload.read(),
                filename=upload.name,
                description=form.cleaned_data["description"],
                fmt=form.cleaned_data["format"] or None,
            )
        except JobRefused as e:
            form.add_error(None, str(e))
        else:
            if job.status == JobStatus.SUCCEEDED:
                messages.success(request, job.message)
                return redirect_to(request, job.result["url"])
            if job.active:
                return job_started(request, job)
            issues = _job_issues(job)
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
@require_GET
def run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, role = score_access(request, slug)
    run = visible_run(user=request.user, collection=collection, run_id=run_id)
    form = ScoreConfigForm.read(request.GET, collection)
    config = form.config
    scores = services.score_runs(collection, [run], config)
    table = selectors.question_table(collection, scores, run)
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
    # the cells written here, as the template's filters write them (floatformat:4,
    # truncatechars:80): 50 rows of filters cost the template more than the rest
    rows = [
        {
            "qid": q,
            "text": Truncator(texts.get(q, "")).chars(80),
            "L": int(table.at[q, "L"]),
            "R": int(table.at[q, "R"]),
            "values": [floatformat(table.at[q, m], 4) for m in config.metrics],
            "marks": marks.get(q, []),
        }
        for q in page.object_list
    ]
    means = scores.means().loc[run.name]
    # a run of a campaign has thousands: the page lists the first ones, and counts them all
    unjudged = selectors.unjudged_answers(run, limit=UNJUDGED_SHOWN)
    return render_page(
        request,
        "evaluation/run_detail.html",
        {
            "collection": collection,
            "role": role,
            "run": run,
            "config": config,
            "form": form.shown(),
            "metrics": metric_choices(config),
            "means": [means[m] for m in config.metrics],
            "rows": rows,
            "page": page,
            "judged": len(scores.per_question[run.name]),
            "shown": len(table),
            "not_judged": scores.unknown[run.name],
            "unjudged": unjudged,
            "pool": selectors.pool_counts(run),
            "is_organizer": role == Role.ORGANIZER,
            "sort": sort,
            "search": search,
            "can_change": run_may_change(run, request.user),
            "history": selectors.run_history(run),
        },
        partial="question-table",
    )


def _job_ended(request: HtmxHttpRequest, job: Job, fallback: str, *args: object) -> HttpResponse:
    """Where a page that started ``job`` sends the browser: the job's page while it runs;
    once it ended, its result's page with its message (or ``fallback`` with its failure)."""
    if job.active:
        return job_started(request, job)
    if job.status == JobStatus.SUCCEEDED:
        messages.success(request, job.message)
        return redirect_to(request, job.result.get("url") or fallback, *args)
    messages.error(request, job.message)
    return redirect_to(request, fallback, *args)


@require_POST
def run_pool(request: HtmxHttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Send the run's unjudged answers to the assessors' pool (``run_jobs.run_pool``)."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request.user, collection, Role.ORGANIZER)
    run = get_object_or_404(Run.objects.active(), collection=collection, pk=run_id)
    try:
        job = run_jobs.run_pool_start(run=run, user=request.user)
    except JobRefused as e:
        messages.error(request, str(e))
        return redirect_to(request, "evaluation:run-detail", collection.slug, run.pk)
    return _job_ended(request, job, "evaluation:run-detail", collection.slug, run.pk)


@require_POST
def run_pool_all(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Send the unjudged answers of every run of the collection to the assessors' pool
    (``run_jobs.runs_pool_all``; organizers)."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request.user, collection, Role.ORGANIZER)
    try:
        job = run_jobs.runs_pool_all_start(collection=collection, user=request.user)
    except JobRefused as e:
        messages.error(request, str(e))
        return redirect_to(request, "evaluation:run-list", collection.slug)
    return _job_ended(request, job, "evaluation:run-list", collection.slug)


def _changeable_run(request: HttpRequest, slug: str, run_id: int) -> tuple[Collection, Run]:
    """The run ``run_id`` if the user may withdraw or replace it (403 otherwise)."""
    collection, _ = score_access(request, slug)
    run = visible_run(user=request.user, collection=collection, run_id=run_id)
    require_may_change(run, request.user)
    return collection, run


@require_http_methods(["GET", "POST"])
def run_withdraw(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """GET: the confirm step; POST: withdraw the run (kept for the audit trail)."""
    collection, run = _changeable_run(request, slug, run_id)
    if request.method == "POST":
        services.run_withdraw(run=run, by=request.user)
        messages.success(request, _("Run %(name)s withdrawn.") % {"name": repr(run.name)})
        return redirect_to(request, "evaluation:run-list", collection.slug)
    return TemplateResponse(
        request,
        "evaluation/run_withdraw.html",
        {"collection": collection, "run": run, "answers": run.answers.count()},
    )


@require_http_methods(["GET", "POST"])
def run_replace(request: HtmxHttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Replace the run's file, all or nothing (the checks of an upload; the job
    ``run_jobs.run_replace``, at once for a small file)."""
    collection, run = _changeable_run(request, slug, run_id)
    issues: list[dict[str, object]] = []
    posted = request.method == "POST"
    form = RunReplaceForm(request.POST, request.FILES) if posted else RunReplaceForm()
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            job = run_jobs.run_replace_start(
                run=run,
                user=request.user,
                data=upload.read(),
                filename=upload.name,
                fmt=form.cleaned_data["format"] or None,
            )
        except JobRefused as e:
            form.add_error(None, str(e))
        else:
            if job.status == JobStatus.SUCCEEDED:
                messages.success(request, job.message)
                return redirect_to(request, job.result["url"])
            if job.active:
                return job_started(request, job)
            issues = _job_issues(job)
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
    collection, _ = score_access(request, slug)
    run = visible_run(user=request.user, collection=collection, run_id=run_id)
    config = checked(ScoreConfigForm.read(request.GET, collection))
    scores = services.score_runs(collection, [run], config)
    table = selectors.question_table(collection, scores, run)
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
        score_preamble(collection, config, run=run.name),
        ["run", "question_id", "L", "R", *config.metrics],
        rows,
        precision=csv_precision(request),
    )
