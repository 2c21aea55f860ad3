"""Annotation pages.  Function views, visible control flow (STYLE.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from .models import Collection, Membership, Question, QuestionStatus
from .permissions import ORGANIZER, require_role
from .selectors import collection_overview


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("annotate:collection-list")


@require_GET
def collection_list(request: HttpRequest) -> HttpResponse:
    collections = Collection.objects.visible_to(request.user).with_counts()
    roles = dict(Membership.objects.filter(user=request.user).values_list("collection_id", "role"))
    rows = [{"collection": c, "role": "organizer" if request.user.is_staff else roles.get(c.pk),
             "percent_done": round(100 * c.n_done / c.n_questions) if c.n_questions else 0}
            for c in collections]
    return TemplateResponse(request, "annotate/collection_list.html", {"rows": rows})


@require_GET
def collection_detail(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection)
    context = {
        "collection": collection,
        "role": role,
        "is_organizer": role == ORGANIZER,
        "stats": collection_overview(collection),
        "levels": list(collection.levels.all()),
        "members": list(collection.memberships.select_related("user")) if role == ORGANIZER else [],
    }
    return TemplateResponse(request, "annotate/collection_detail.html", context)


@require_GET
def my_queue(request: HttpRequest) -> HttpResponse:
    """Questions assigned to the user in any collection, open ones first."""
    questions = list(Question.objects.assigned_to(request.user).with_counts().for_queue())
    open_count = sum(q.status != QuestionStatus.DONE for q in questions)
    return TemplateResponse(request, "annotate/my_queue.html",
                            {"questions": questions, "open_count": open_count})
