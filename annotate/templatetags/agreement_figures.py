"""The figures of the agreement page: a number, or an em dash saying why it is undefined."""

from __future__ import annotations

from django import template

register = template.Library()

# why a figure is nan (``evaluation.metrics.agreement``: kappa and alpha are 1.0 when a
# single class occurs, so they are undefined only with nothing to compare)
WHY = {
    "strings": "undefined: no string judged by both layers",
    "correct": "undefined: no string judged correct in both layers (no grouping to compare)",
}


@register.inclusion_tag("annotate/_figure.html")
def figure(value: float | None, places: int = 3, why: str = "strings") -> dict:
    """``value`` with ``places`` decimals (as ``floatformat``), or, when it is undefined
    (nan or None), an em dash whose title says why (``WHY``)."""
    undefined = value is None or value != value
    return {"value": value, "places": places, "undefined": undefined, "why": WHY.get(why, why)}
