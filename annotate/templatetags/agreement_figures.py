"""The figures of the agreement page: a number, or an em dash saying why it is undefined."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

register = template.Library()

# why a figure is nan (``evaluation.metrics.agreement``: kappa and alpha are 1.0 when a
# single class occurs, so they are undefined only with nothing to compare)
WHY = {
    "strings": _("undefined: no string judged by both layers"),
    "correct": _("undefined: no string judged correct in both layers (no grouping to compare)"),
}


@register.simple_tag
def figure(value: float | None, places: int = 3, why: str = "strings") -> SafeString:
    """``value`` with ``places`` decimals (as ``floatformat``), or, when it is undefined
    (nan or None), an em dash whose title says why (``WHY``); ``{% figure x as name %}``
    keeps it for a sentence (``blocktranslate``)."""
    undefined = value is None or value != value
    context = {"value": value, "places": places, "undefined": undefined, "why": WHY.get(why, why)}
    return SafeString(render_to_string("annotate/_figure.html", context).strip())
