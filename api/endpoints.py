"""The REST API (DESIGN.md section 11): the pages' reads and the run upload, as JSON.

Every endpoint authenticates with a personal token (``api.auth``) and then applies the role
rules of the pages through the same functions: ``require_role`` for collection roles,
``evaluation.access`` for scores and runs (``score_access``, ``visible_run``,
``require_may_submit``), ``ScoreConfigForm`` for score parameters, the upload job
``evaluation.run_jobs.run_upload`` for uploads (answered 202 with the job, which
``GET /api/jobs/{id}`` follows), ``services.run_withdraw`` for withdrawals,
``services.score_runs`` for scores.  A refusal is 403 with a message that names nothing of
the collection, a missing object 404.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Literal

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from ninja import File, Form, NinjaAPI, Query, Status, UploadedFile
from ninja.errors import HttpError
from ninja.openapi import docs

from annotate.exports import export_judgments
from annotate.models import Collection, Membership, Role, is_site_staff
from annotate.permissions import require_role
from annotate.selectors import attach_assessors, question_list_queryset
from config.downloads import csv_download
from config.errors import RETRY_AFTER_SECONDS, is_database_unavailable
from evaluation import comparing, run_jobs, score_jobs, services
from evaluation.access import require_may_submit, score_access, visible_run
from evaluation.analysis.score_config import COMPARE_METRICS, ScoreConfig
from evaluation.forms import RunUploadForm, ScoreConfigForm, form_problem_list, form_problems
from evaluation.metrics import DEFAULT_METRICS
from evaluation.metrics.csvio import read_records
from evaluation.models import Run
from evaluation.score_store import ScoresPending
from evaluation.selectors import question_table, visible_runs
from jobs.models import Job
from jobs.selectors import visible_job
from jobs.services import JobRefused, jobs_reap

from . import schemas
from .auth import AuthFailuresThrottled, TokenAuth, UserRateThrottle, docs_access


class Swagger(docs.Swagger):
    """ninja's Swagger UI page with its vendored files (``config.settings.NINJA_DIR``):
    ninja is not an installed app (importing it took half a second of every start), and
    ninja's own page then falls back to its CDN copy.  Its template, ``api/docs.html``, is
    ninja's with a bar that leads back to the app."""

    template = "api/docs.html"

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: object) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": docs._csrf_needed(api),
        }
        return render(request, self.template, context)


api = NinjaAPI(
    title="QA synsets API",
    version="1",
    description="Collections, runs, scores and comparisons of the QA synsets app. "
    "Authenticate with a personal token (your 'API tokens' page): "
    "`Authorization: Bearer qas_...`. See docs/api.md.",
    urls_namespace="api",
    auth=TokenAuth(),
    throttle=[UserRateThrottle()],
    docs_url="/docs",
    docs=Swagger(),
    openapi_url="/openapi.json",
    docs_decorator=docs_access,
)

Precision = schemas.Precision
# the errors every endpoint may answer (documented in the schema; api/auth.py, below)
ERRORS = {
    401: schemas.ErrorOut,
    403: schemas.ErrorOut,
    404: schemas.ErrorOut,
    422: schemas.ErrorOut,
    429: schemas.ErrorOut,
}
# what an upload's 202 and GET /api/jobs/{id} show of a job's result (its page's link and
# the ids it names are for the pages)
JOB_RESULT_HIDDEN = ("url", "link", "run_id", "run_name")
READABLE_DIGITS = 6  # as the CSV downloads (float_format ".6f")
# never rounded to decimals (4.5e-8 is not 0): 6 significant digits, or every digit
P_VALUES = ("sign_p", "wilcoxon_p", "t_p", "randomization_p")
NOT_FOUND = "Not found"  # every 404's detail: no name or slug is echoed back
SCORES_RETRY_AFTER = 3  # seconds: a score request answered 202 while a job computes them


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc) or "Forbidden"}, status=403)


@api.exception_handler(AuthFailuresThrottled)
def _auth_throttled(request: HttpRequest, exc: AuthFailuresThrottled) -> HttpResponse:
    response = api.create_response(request, {"detail": str(exc)}, status=429)
    response["Retry-After"] = str(exc.wait)
    return response


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": NOT_FOUND}, status=404)


@api.exception_handler(DatabaseError)
def _database_error(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    """A busy or unreachable database is 503 with Retry-After, as on the pages
    (config/errors.py); any other database error is a bug: re-raised (500)."""
    if not is_database_unavailable(exc):
        raise exc
    response = api.create_response(
        request, {"detail": "The database is busy or unavailable; try again shortly."}, status=503
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


@api.exception_handler(ScoresPending)
def _scores_pending(request: HttpRequest, exc: ScoresPending) -> HttpResponse:
    """Scores a job computes first (the judgments changed since they were stored, and
    scoring them again takes longer than a request may: ``evaluation.score_jobs``): 202
    with the job's progress and Retry-After; the same request asked again answers the
    scores once they are stored."""
    try:
        job = score_jobs.scores_start(exc.collection, exc.config)
        progress = {
            "status": job.status,
            "phase": job.phase,
            "done": job.done,
            "total": job.total,
            "unit": job.unit,
        }
        detail = (
            "The scores are being computed by a background job (the judgments changed "
            "since they were stored); ask again in a few seconds."
        )
    except JobRefused as e:
        progress = {"status": "waiting", "phase": "", "done": 0, "total": None, "unit": ""}
        detail = f"The scores wait for another job on this collection: {e}"
    response = api.create_response(
        request,
        {"detail": detail, "job": progress, "retry_after": SCORES_RETRY_AFTER},
        status=202,
    )
    response["Retry-After"] = str(SCORES_RETRY_AFTER)
    return response


# -- helpers ------------------------------------------------------------------------------
def _collection(request: HttpRequest, slug: str, *roles: str) -> tuple[Collection, str]:
    collection = get_object_or_404(Collection, slug=slug)
    return collection, require_role(request.user, collection, *roles)


def _config(
    request: HttpRequest,
    collection: Collection,
    default_metrics: Sequence[str] = DEFAULT_METRICS,
) -> ScoreConfig:
    """The score configuration of the query string, read by the pages' form (the same
    checks, the same messages as a CSV download's 400); 422 with them when it is invalid
    (``schemas.ScoreParams`` documents the parameters and checks their types)."""
    form = ScoreConfigForm.read(request.GET, collection, default_metrics=default_metrics)
    if form.errors:
        raise HttpError(422, form_problems(form))
    return form.config


def _number(value, precision: Precision, *, significant: bool = False) -> float | None:
    """A number for JSON: NaN as null; rounded to 6 decimals unless ``precision="full"``
    (every double then round-trips exactly: JSON numbers are written shortest-repr).
    ``significant``: 6 significant digits instead of 6 decimals, for p-values, which
    decimals would round to 0 below 5e-7."""
    if value is None:
        return None
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return None
    if precision == "full":
        return value
    if significant:
        return float(f"{value:.{READABLE_DIGITS}g}")
    return round(value, READABLE_DIGITS)


def _values(row, metrics, precision: Precision) -> dict[str, float | None]:
    return {m: _number(row[m], precision) for m in metrics}


def _config_out(collection: Collection, config: ScoreConfig, precision: Precision) -> dict:
    return {
        "metrics": list(config.metrics),
        "gains": config.gains,
        "beta": config.beta,
        "rbp_p": config.rbp_p,
        "matching": collection.matching_mode,
        "judgment_version": collection.judgment_version,
        "precision": precision,
    }


def _run_out(run: Run) -> dict:
    return {
        "id": run.pk,
        "name": run.name,
        "owner": run.owner.get_username(),
        "description": run.description,
        "format": run.format,
        "source_name": run.source_name,
        "sha256": run.sha256,
        "uploaded_at": run.uploaded_at,
    }


def _job_out(job: Job) -> dict:
    """A job as the API shows it: where to follow it, how far it came, how it ended (every
    error with its file and line), and its result: for a run's upload or replacement,
    ``run`` (as ``GET .../runs/{id}`` gives it) once it succeeded."""
    result = None
    if job.result is not None:
        result = {k: v for k, v in job.result.items() if k not in JOB_RESULT_HIDDEN}
        if isinstance(result.get("means"), dict):  # rounded as every score of the API
            result["means"] = {m: _number(v, "readable") for m, v in result["means"].items()}
        run_id = job.result.get("run_id")
        if run_id is not None and job.kind in ("run-upload", "run-replace"):
            run = Run.objects.select_related("owner").filter(pk=run_id).first()
            result["run"] = _run_out(run) if run is not None else None
    return {
        "job": f"/api/jobs/{job.pk}",
        "id": job.pk,
        "kind": job.kind,
        "label": job.label,
        "status": job.status,
        "phase": job.phase,
        "done": job.done,
        "total": job.total,
        "unit": job.unit,
        "message": job.message,
        "errors": job.errors,
        "result": result,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def _collection_out(collection: Collection, role: str | None) -> dict:
    return {
        "slug": collection.slug,
        "name": collection.name,
        "description": collection.description,
        "role": role,
        "matching_mode": collection.matching_mode,
        "max_output_size": collection.max_output_size,
        "open_for_submissions": collection.open_for_submissions,
        "leaderboard_published": collection.leaderboard_published,
        "judgment_version": collection.judgment_version,
        "questions": collection.n_questions
        if hasattr(collection, "n_questions")
        else collection.questions.count(),
        "levels": [
            {"code": lv.code, "label": lv.label, "gain": lv.gain} for lv in collection.levels.all()
        ],
    }


# -- who am I, collections ----------------------------------------------------------------
@api.get("/me", response={200: schemas.MeOut, **ERRORS}, url_name="me", tags=["collections"])
def me(request: HttpRequest):
    """The user the token belongs to."""
    return {"username": request.user.get_username(), "staff": is_site_staff(request.user)}


@api.get(
    "/collections",
    response={200: list[schemas.CollectionOut], **ERRORS},
    url_name="collection-list",
    tags=["collections"],
)
def collection_list(request: HttpRequest):
    """The collections you are a member of (staff: all), each with your role."""
    collections = list(
        Collection.objects.visible_to(request.user).with_counts().prefetch_related("levels")
    )
    # the roles of all of them in one query (collection_role would ask once per collection)
    staff = is_site_staff(request.user)
    roles = (
        {}
        if staff
        else dict(Membership.objects.filter(user=request.user).values_list("collection_id", "role"))
    )
    return [_collection_out(c, Role.ORGANIZER if staff else roles.get(c.pk)) for c in collections]


@api.get(
    "/collections/{slug}",
    response={200: schemas.CollectionOut, **ERRORS},
    url_name="collection-detail",
    tags=["collections"],
)
def collection_detail(request: HttpRequest, slug: str):
    """One collection and your role in it (403 unless you are a member)."""
    collection, role = _collection(request, slug)
    return _collection_out(collection, role)


@api.get(
    "/collections/{slug}/questions",
    response={200: list[schemas.QuestionOut], **ERRORS},
    url_name="question-list",
    tags=["collections"],
)
def question_list(request: HttpRequest, slug: str, status: str = "", search: str = ""):
    """The collection's questions with their counts and assessors (organizers only)."""
    collection, _ = _collection(request, slug, Role.ORGANIZER)
    questions = list(question_list_queryset(collection, status=status, search=search))
    attach_assessors(questions)
    return [
        {
            "question_id": q.qid,
            "text": q.text,
            "status": q.status,
            "synsets": q.n_synsets,
            "strings": q.n_strings,
            "unjudged": q.n_unjudged,
            "assessors": q.assessor_names,
        }
        for q in questions
    ]


@api.get(
    "/collections/{slug}/judgments",
    url_name="judgments-export",
    tags=["collections"],
    response={200: list[schemas.JudgmentOut], **ERRORS},
)
def judgments_export(request: HttpRequest, slug: str, format: Literal["json", "csv"] = "json"):
    """The judgments (organizers only), as the page's export: CSV (``format=csv``, the same
    file as the export page) or JSON records with the same columns."""
    collection, _ = _collection(request, slug, Role.ORGANIZER)
    text = export_judgments(collection)
    if format == "csv":
        return csv_download(text, f"{slug}-judgments.csv")
    return read_records(text)


# -- runs ---------------------------------------------------------------------------------
@api.get(
    "/collections/{slug}/runs",
    response={200: list[schemas.RunOut], **ERRORS},
    url_name="run-list",
    tags=["runs"],
)
def run_list(request: HttpRequest, slug: str):
    """The runs you may see: all (organizers), your own, or every participant's when the
    leaderboard is published.  Assessors see none (403)."""
    collection, _ = score_access(request, slug)
    runs = visible_runs(user=request.user, collection=collection)
    return [_run_out(r) for r in runs]


@api.post(
    "/collections/{slug}/runs",
    url_name="run-upload",
    tags=["runs"],
    response={202: schemas.JobOut, 400: schemas.UploadErrorOut, 409: schemas.ErrorOut, **ERRORS},
    # name and file are required and format one of three (the schema says so), but the
    # upload form checks them, not ninja: a missing or bad one is a refused upload (400
    # with its errors, as the page lists them), not ninja's 422 list
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "required": ["name", "file"],
                        "properties": {"format": {"enum": ["", "qa", "trec"]}},
                    }
                }
            }
        }
    },
)
def run_upload(
    request: HttpRequest,
    slug: str,
    response: HttpResponse,
    name: Form[str] = "",
    file: File[UploadedFile] = None,
    description: Form[str] = "",
    format: Form[str] = "",
):
    """Upload a run (multipart), all or nothing, with the checks of the upload page.  A
    missing or bad form field (``name``, ``file``, ``format``, a file over the size limit)
    is refused at once: 400 with its errors.  Otherwise the upload is a job, and the answer
    is always 202 with the job (``Location``: ``GET /api/jobs/{id}``): a small file has
    usually been read already (``status`` ``succeeded``, the run in ``result.run``; or
    ``failed`` with every problem of the file and its line in ``errors``: nothing is
    stored), a large one is ``queued`` or ``running``: follow ``job`` until it ends.  409
    when another job holds the collection (a matching-mode change)."""
    collection, _ = score_access(request, slug)
    require_may_submit(request.user, collection)
    form = RunUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        upload = request.FILES.get("file")
        errors = [
            {"file": upload.name if upload else "", "line": None, "message": m}
            for m in form_problem_list(form)
        ]
        return Status(400, {"detail": "The run was not stored.", "errors": errors})
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
        return Status(409, {"detail": str(e)})
    response["Location"] = f"/api/jobs/{job.pk}"
    return Status(202, _job_out(job))


@api.get(
    "/collections/{slug}/runs/{run_id}",
    response={200: schemas.RunOut, **ERRORS},
    url_name="run-detail",
    tags=["runs"],
)
def run_detail(request: HttpRequest, slug: str, run_id: int):
    collection, _ = score_access(request, slug)
    return _run_out(visible_run(user=request.user, collection=collection, run_id=run_id))


@api.delete(
    "/collections/{slug}/runs/{run_id}",
    response={200: schemas.RunWithdrawnOut, **ERRORS},
    url_name="run-withdraw",
    tags=["runs"],
)
def run_withdraw(request: HttpRequest, slug: str, run_id: int):
    """Withdraw a run: its owner while the collection is open for submissions, organizers
    always (403 otherwise).  The run's record stays in the audit trail; it leaves every
    listing, ranking and comparison (then 404)."""
    collection, _ = score_access(request, slug)
    run = services.run_withdraw(
        run=visible_run(user=request.user, collection=collection, run_id=run_id), by=request.user
    )
    return {
        **_run_out(run),
        "withdrawn_at": run.withdrawn_at,
        "withdrawn_by": request.user.get_username(),
    }


@api.get(
    "/jobs/{job_id}",
    response={200: schemas.JobOut, **ERRORS},
    url_name="job-detail",
    tags=["jobs"],
)
def job_detail(request: HttpRequest, job_id: int):
    """A job you started (a run's upload): its status (``queued``, ``running``,
    ``succeeded``, ``failed``, ``cancelled``), its phase and progress (``done`` of ``total``
    ``unit``), its message, every error of its file with its line, and its result (an
    upload's ``run``).  Another user's job is 404."""
    jobs_reap()
    return _job_out(visible_job(request.user, job_id))


@api.get(
    "/collections/{slug}/runs/{run_id}/scores",
    response={200: schemas.RunScoresOut, **ERRORS},
    url_name="run-scores",
    tags=["scores"],
)
def run_scores(
    request: HttpRequest,
    slug: str,
    run_id: int,
    params: Query[schemas.ScoreParams],
):
    """Per-question scores and means of a run, with the parameters of the score pages:
    ``metric`` (repeat it; default the run page's), ``gains`` (``default`` = the
    collection's levels, ``3:2:1``, ``adjusted``, ``S=4,A=2,B=1``...), ``beta``, ``rbp_p``.
    ``precision=full`` gives every score at full double precision (default: 6 decimals)."""
    collection, _ = score_access(request, slug)
    run = visible_run(user=request.user, collection=collection, run_id=run_id)
    config = _config(request, collection)
    precision = params.precision
    scores = services.score_runs(collection, [run], config)
    table = question_table(collection, scores, run)
    means = scores.means().loc[run.name]
    return {
        "run": _run_out(run),
        "config": _config_out(collection, config, precision),
        "means": _values(means, config.metrics, precision),
        "judged_questions": len(table),
        "answers_for_unjudged_questions": scores.unknown[run.name],
        "questions": [
            {
                "question_id": q,
                "L": int(row["L"]),
                "R": int(row["R"]),
                "scores": _values(row, config.metrics, precision),
            }
            for q, row in zip(table.index, table.to_dict("records"), strict=True)
        ],
    }


@api.get(
    "/collections/{slug}/compare",
    response={200: schemas.ComparisonOut, **ERRORS},
    url_name="compare",
    tags=["scores"],
)
def compare(
    request: HttpRequest,
    slug: str,
    a: int,
    b: int,
    params: Query[schemas.ScoreParams],
):
    """Runs ``a`` and ``b`` compared question by question, with the figures of the compare
    page: per metric the means, B - A, questions up/down/tied, sign, Wilcoxon, paired t and
    randomization p-values and the effect size; per question both scores and B - A; and
    the questions where the Q-measure and RR differences disagree (one zero, the other
    not). Default metrics: Q-measure and RR.  P-values have 6 significant digits (not 6
    decimals: 4.5e-8 is not 0), every digit with ``precision=full``."""
    collection, _ = score_access(request, slug)
    run_a = visible_run(user=request.user, collection=collection, run_id=a)
    run_b = visible_run(user=request.user, collection=collection, run_id=b)
    if run_a.pk == run_b.pk:
        raise HttpError(422, "choose two different runs")
    config = _config(request, collection, default_metrics=COMPARE_METRICS)
    precision = params.precision
    result = comparing.runs_compare(collection=collection, run_a=run_a, run_b=run_b, config=config)
    ms = config.metrics
    tests = [
        {
            "metric": t.metric,
            "n": t.n,
            "up": t.up,
            "down": t.down,
            "tied": t.tied,
            **{
                k: _number(getattr(t, k), precision)
                for k in ("mean_a", "mean_b", "mean_diff", "effect_size")
            },
            **{k: _number(getattr(t, k), precision, significant=True) for k in P_VALUES},
        }
        for t in result.tests
    ]
    pa, pb, d = (
        f.to_dict("index") for f in (result.per_question_a, result.per_question_b, result.diffs)
    )
    return {
        "a": _run_out(run_a),
        "b": _run_out(run_b),
        "config": _config_out(collection, config, precision),
        "tests": tests,
        "questions": [
            {
                "question_id": q,
                "a": _values(pa[q], ms, precision),
                "b": _values(pb[q], ms, precision),
                "b_minus_a": _values(d[q], ms, precision),
            }
            for q in result.diffs.index
        ],
        "disagree": {
            "metrics": list(dict.fromkeys([result.q_metric, result.rr_metric])),
            "questions": result.disagree_largest_first(),
        },
    }
