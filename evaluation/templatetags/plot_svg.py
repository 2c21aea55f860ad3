"""The difference plot's per-question SVG (``evaluation/compare.html``): the marks of a
series and the question columns, 2,000 of each at size M.  Written by
``format_html_join`` (every value escaped as the template escapes it) instead of
``{% for %}`` loops in the template, which rendered ~20,000 values one node at a time
(over a second at 2,000 questions).  tests/evaluation/test_page_markup_tags.py renders
the old loops beside these tags."""

from __future__ import annotations

from django import template
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from evaluation.analysis.plots import DifferencePlot, Series

register = template.Library()


@register.simple_tag
def plot_marks(series: Series) -> SafeString:
    """``<use href="#mk-SHAPE" x=".." y=".."/>`` per question of ``series``."""
    shape = series.shape
    return format_html_join(
        "", '<use href="#mk-{}" x="{}" y="{}"/>', ((shape, x, y) for x, y in series.marks)
    )


@register.simple_tag
def plot_columns(plot: DifferencePlot) -> SafeString:
    """Per question its column: a link to both ranked lists, titled with the question and
    its differences."""
    return format_html_join(
        "",
        '<a href="{}" data-qid="{}"><title>{}</title><rect class="hit" x="{}" width="1" '
        'height="1" fill="transparent"/></a>',
        ((p.href, p.qid, p.title, p.column) for p in plot.points),
    )
