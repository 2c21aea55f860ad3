"""Evaluation pages: runs, scores, comparisons.  Metrics are computed by the engine
through ``evaluation/services.py``, never here."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from annotate.models import Collection
from annotate.permissions import ORGANIZER, PARTICIPANT, require_role

from .models import Run


@require_GET
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = (Run.objects.visible_to(request.user).select_related("collection", "owner")
            .order_by("collection__name", "name"))
    return TemplateResponse(request, "evaluation/my_runs.html", {"runs": runs})


@require_GET
def run_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request.user, collection, ORGANIZER, PARTICIPANT)
    runs = (Run.objects.visible_to(request.user, collection).select_related("owner")
            .order_by("name"))
    return TemplateResponse(request, "evaluation/run_list.html",
                            {"collection": collection, "role": role, "runs": runs})
