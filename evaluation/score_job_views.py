"""What a score page answers while its scores are being computed by a job
(``evaluation.score_jobs``): the page that waits (status 202: its progress, and it
reloads itself once the scores are stored), and the fragment it polls.  The API answers
202 with the same progress (``api.endpoints``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from config.htmx import HtmxHttpRequest
from jobs.models import Job, JobStatus
from jobs.selectors import job_estimate, unit_label
from jobs.services import JobRefused, jobs_reap

from . import score_jobs
from .access import score_access
from .score_store import ScoresPending

# seconds before a page whose job could not start (a change of mode holds the
# collection) asks again
RETRY_AFTER = 5


def _context(job: Job | None) -> dict[str, object]:
    return {
        "job": job,
        "estimate": job_estimate(job) if job else None,
        "unit": unit_label(job.unit) if job else "",
    }


def scores_pending_response(request: HtmxHttpRequest, pending: ScoresPending) -> HttpResponse:
    """The answer of a score page (or download) whose scores a job computes: the job's
    progress, polled every second; the page reloads itself when the scores are stored
    (202, ``Retry-After``: a script asks again)."""
    refused = ""
    try:
        job: Job | None = score_jobs.scores_start(pending.collection, pending.config)
    except JobRefused as e:
        job, refused = None, str(e)
    template = (
        "evaluation/_scores_progress.html"
        if getattr(request, "htmx", False) and not request.htmx.boosted
        else "evaluation/scores_pending.html"
    )
    response = TemplateResponse(
        request,
        template,
        {
            **_context(job),
            "collection": pending.collection,
            "answers": pending.answers,
            "refused": refused,
        },
        status=202,
    )
    response["Retry-After"] = str(RETRY_AFTER)
    if job is None:
        response["Refresh"] = str(RETRY_AFTER)
    response["Cache-Control"] = "no-store"
    return response


@require_GET
def scores_progress(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    """The progress of the job scoring ``slug``'s runs (for whoever may see its scores);
    once it succeeded, ``HX-Refresh`` reloads the page that waits."""
    jobs_reap()
    collection, _role = score_access(request, slug)
    job = get_object_or_404(Job, pk=job_id, kind=score_jobs.KIND, collection=collection)
    response = TemplateResponse(
        request, "evaluation/_scores_progress.html", {**_context(job), "collection": collection}
    )
    if job.status == JobStatus.SUCCEEDED:
        response["HX-Refresh"] = "true"
    response["Cache-Control"] = "no-store"
    return response
