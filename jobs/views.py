"""The jobs pages: one's recent jobs, one job (its bar, errors and result), the fragment
htmx polls while it runs, and cancel.  ``job_started`` is what a page that started a job
answers: the job's panel in place of its form (htmx), or the job's page."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from config.htmx import HtmxHttpRequest

from . import selectors, services
from .models import Job, JobOutput


def panel_context(job: Job) -> dict[str, object]:
    return {
        "job": job,
        "estimate": selectors.job_estimate(job),
        "unit": selectors.unit_label(job.unit),
        "outputs": list(job.outputs.defer("data")) if not job.active else [],
    }


def job_started(request: HtmxHttpRequest, job: Job) -> HttpResponse:
    """The answer of a page whose form started ``job``: for htmx, the job's panel swapped
    in for the form (it polls until the job ends); otherwise the job's own page."""
    if request.htmx and not request.htmx.boosted:
        return TemplateResponse(request, "jobs/_panel.html", panel_context(job))
    return redirect("jobs:job-detail", job.pk)


@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    services.jobs_reap()
    return TemplateResponse(
        request, "jobs/job_list.html", {"jobs": selectors.recent_jobs(request.user)}
    )


@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    services.jobs_reap()
    job = selectors.visible_job(request.user, job_id)
    return TemplateResponse(request, "jobs/job_detail.html", panel_context(job))


@require_GET
def job_status(request: HttpRequest, job_id: int) -> HttpResponse:
    """The panel alone (htmx polls it every second while the job is active)."""
    services.jobs_reap()
    job = selectors.visible_job(request.user, job_id)
    return TemplateResponse(request, "jobs/_panel.html", panel_context(job))


@require_GET
def job_output(request: HttpRequest, job_id: int, output_id: int) -> HttpResponse:
    """A file the job made, as a download (its owner only)."""
    job = selectors.visible_job(request.user, job_id)
    output = get_object_or_404(JobOutput, pk=output_id, job=job)
    response = HttpResponse(bytes(output.data), content_type=output.content_type)
    response["Content-Disposition"] = content_disposition_header(True, output.name)
    return response


@require_POST
def job_cancel(request: HtmxHttpRequest, job_id: int) -> HttpResponse:
    job = services.job_cancel(selectors.visible_job(request.user, job_id))
    if request.htmx:
        return TemplateResponse(request, "jobs/_panel.html", panel_context(job))
    messages.info(request, gettext("Asked %(job)s to stop.") % {"job": repr(job.label)})
    return redirect("jobs:job-detail", job.pk)
