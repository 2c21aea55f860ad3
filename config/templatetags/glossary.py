"""Links from a figure's name to its entry in the glossary (``config.glossary``)."""

from __future__ import annotations

from django import template
from django.urls import reverse

from config.glossary import glossary_anchor

register = template.Library()


@register.filter
def glossary_url(key: str) -> str:
    """The address of ``key``'s glossary entry (``/help/glossary/#q-measure``), or ""."""
    anchor = glossary_anchor(str(key))
    return f"{reverse('glossary')}#{anchor}" if anchor else ""


@register.inclusion_tag("help/_term.html")
def term(key: str, label: str = "", mark: bool = False) -> dict:
    """``label`` (else ``key``) as a link to ``key``'s glossary entry; with ``mark``, the
    label stays as it is and a small "?" link follows it (for a name that is already a
    link, such as a column's sort link).  A key the glossary does not define: the label
    alone."""
    return {"url": glossary_url(key), "label": label or key, "mark": mark}
