"""A collection's Matching mode page (DESIGN.md section 4).  Here, in the evaluation app,
because a change re-keys the annotation app's strings and the runs' answers together, in one
transaction (``services.collection_matching_mode_change``), run as a job that has the
collection to itself (``matching_jobs``).  Organizers only."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_http_methods

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from jobs.models import JobStatus
from jobs.services import JobRefused
from jobs.views import job_started

from . import matching_jobs
from .forms import MatchingModeForm


@require_http_methods(["GET", "POST"])
def collection_matching_mode(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Change the collection's matching mode: every spelling of its strings and every run
    answer is re-keyed; strings that would become one but are judged differently refuse it,
    listed next to the field.  Refused while another job runs on the collection."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    form = MatchingModeForm(
        request.POST if request.method == "POST" else None,
        initial={"matching_mode": collection.matching_mode},
    )
    if form.is_valid():
        try:
            job = matching_jobs.mode_change_start(
                collection=collection, user=request.user, mode=form.cleaned_data["matching_mode"]
            )
        except JobRefused as e:
            form.add_error(None, f"The matching mode was not changed: {e}")
        else:
            if job.active:
                return job_started(request, job)
            if job.status == JobStatus.SUCCEEDED:
                messages.success(request, job.message)
                return redirect_to(request, "annotate:collection-detail", collection.slug)
            form.add_error("matching_mode", job.message)
    return render_page(
        request,
        "evaluation/collection_matching_mode.html",
        {"collection": collection, "form": form},
        partial="mode-form",
    )
