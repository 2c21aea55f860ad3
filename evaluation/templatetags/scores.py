"""Template filters of the score pages."""

from __future__ import annotations

from django import template

from evaluation.analysis.stats import format_p, format_resampled_p

register = template.Library()


@register.filter
def pvalue(p: float | None) -> str:
    """A p-value as every page shows it (``stats.format_p``: 4 decimals, scientific
    notation below 0.0001, a dash when there is none)."""
    return format_p(p)


@register.filter
def resampled_p(p: float | None, trials: int | None) -> str:
    """A p-value of a test of ``trials`` resamples (bootstrap ASL, randomised Tukey HSD):
    "< 1/B" at its floor (``stats.format_resampled_p``), else as ``pvalue``."""
    if p is None or not trials:
        return format_p(p)
    return format_resampled_p(p, int(trials))


@register.filter
def percent(share: float | None) -> str:
    """A share (0 to 1) as a percentage, ``100 %``, ``66.7 %``; a dash for none."""
    if share is None or share != share:
        return "—"
    text = f"{100 * float(share):.1f}".rstrip("0").rstrip(".")
    return f"{text} %"
