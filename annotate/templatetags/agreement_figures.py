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


# the footnote letter beside the dash; the page lists the letters and reasons under its
# tables (``agreement.html``), so the reason is read without a hover, on a phone too
MARK = {"strings": "a", "correct": "b"}


@register.simple_tag
def figure(value: float | None, places: int = 3, why: str = "strings") -> SafeString:
    """``value`` with ``places`` decimals (as ``floatformat``), or, when it is undefined
    (nan or None), an em dash with the footnote letter of why (``MARK``, ``WHY``);
    ``{% figure x as name %}`` keeps it for a sentence (``blocktranslate``)."""
    undefined = value is None or value != value
    context = {
        "value": value,
        "places": places,
        "undefined": undefined,
        "why": WHY.get(why, why),
        "mark": MARK.get(why, ""),
    }
    return SafeString(render_to_string("annotate/_figure.html", context).strip())


@register.inclusion_tag("annotate/_figure_notes.html")
def figure_notes() -> dict:
    """The footnotes of the dashes ``figure`` writes: each letter and its reason."""
    return {"notes": [(MARK[k], WHY[k]) for k in MARK]}
