"""The figures of the agreement page: a number, or an em dash saying why it is undefined."""

from __future__ import annotations

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import format_html

register = template.Library()

# why a figure is nan (``evaluation.metrics.agreement``: kappa and alpha are 1.0 when a
# single class occurs, so they are undefined only with nothing to compare)
WHY = {
    "strings": "undefined: no string judged by both layers",
    "correct": "undefined: no string judged correct in both layers (no grouping to compare)",
}


@register.simple_tag
def figure(value: float | None, places: int = 3, why: str = "strings") -> str:
    """``value`` with ``places`` decimals (as ``floatformat``), or, when it is undefined
    (nan or None), an em dash whose title says why (``WHY``)."""
    if value is None or value != value:
        return format_html('<span class="undefined" title="{}">—</span>', WHY.get(why, why))
    return floatformat(value, places)
