"""The help pages: the glossary of the figures every score, reliability and agreement page
shows (each entry an anchor, ``config.glossary``).  Login required, like every page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """The glossary: definitions, formulas and the papers they come from."""
    return render(request, "help/glossary.html")
