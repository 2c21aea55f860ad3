"""Template filters of the score pages."""

from __future__ import annotations

from django import template

from evaluation.analysis.stats import format_p

register = template.Library()


@register.filter
def pvalue(p: float | None) -> str:
    """A p-value as every page shows it (``stats.format_p``: 4 decimals, scientific
    notation below 0.0001, a dash when there is none)."""
    return format_p(p)
