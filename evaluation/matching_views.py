"""A collection's Matching mode page (DESIGN.md section 4).  Here, in the evaluation app,
because a change re-keys the annotation app's strings and the runs' answers together, in one
transaction (``services.collection_matching_mode_change``).  Organizers only."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_http_methods

from annotate.matching import MatchingModeConflict
from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.htmx import HtmxHttpRequest, redirect_to, render_page

from . import services
from .forms import MatchingModeForm


@require_http_methods(["GET", "POST"])
def collection_matching_mode(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Change the collection's matching mode: every spelling of its strings and every run
    answer is re-keyed; strings that would become one but are judged differently refuse it,
    listed next to the field."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    form = MatchingModeForm(
        request.POST if request.method == "POST" else None,
        initial={"matching_mode": collection.matching_mode},
    )
    if form.is_valid():
        mode = form.cleaned_data["matching_mode"]
        try:
            folded = services.collection_matching_mode_change(
                collection=collection, mode=mode, by=request.user
            )
        except MatchingModeConflict as e:
            form.add_error("matching_mode", str(e))
        else:
            messages.success(
                request,
                f"Matching mode: {collection.get_matching_mode_display()}"
                + (f"; {folded} string(s) folded into others." if folded else "."),
            )
            return redirect_to(request, "annotate:collection-detail", collection.slug)
    return render_page(
        request,
        "evaluation/collection_matching_mode.html",
        {"collection": collection, "form": form},
    )
