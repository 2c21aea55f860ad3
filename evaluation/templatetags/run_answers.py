"""A run's answers as the run and compare pages list them, written in Python in one join:
the marked answers to one question (``marks_list``: the run page's 50 rows of 10 answers,
the compare page's 40 lists), and the run's unjudged answers (``unjudged_rows``: up to 200
rows).  Through the template engine, one ``<li>`` or ``<tr>`` at a time, they cost a
tenth of a second a page at size M.  The texts are the templates' own (the same msgids,
translated the same way) and every value is escaped as the template would: a
``{% translate %}`` literal is not escaped, a ``{% blocktranslate %}``'s variables and
every ``{{ value }}`` are."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from django import template
from django.conf import settings
from django.utils.formats import localize
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

register = template.Library()


def _v(value: Any) -> str:
    """``{{ value }}`` (localized, escaped; an int is localized to itself unless the
    settings group thousands, and is asked for 2,000 times a page)."""
    if isinstance(value, str):
        return escape(value)
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return escape(str(localize(value)))


@register.simple_tag
def marks_list(marks: Iterable[Mapping[str, Any]]) -> SafeString:
    """``<ol class="marks">`` of ``marks`` (``selectors.marks_by_question``: rank, answer,
    status, level, synset, label), or its one line saying there is none."""
    items = []
    synset_of = gettext("synset %(synset)s")
    duplicate_of = gettext("duplicate of synset %(synset)s")
    no_credit = gettext("(no credit)")
    for m in marks:
        status = m["status"]
        label = f" ({_v(m['label'])})" if m["label"] else ""
        end = "\n  </li>"  # the template's line break after each reason but the last
        if status == "correct":
            why = (
                f'<span class="badge">{_v(m["level"])}</span> '
                f"{synset_of % {'synset': _v(m['synset'])}}{label}"
            )
        elif status == "duplicate":
            why = f"{duplicate_of % {'synset': _v(m['synset'])}}{label} {no_credit}"
        elif status == "incorrect":
            why = gettext("incorrect")
        elif status == "nil_not_first":
            why = f"{gettext('NIL below rank 1')} {no_credit}"
        else:
            why, end = gettext("unjudged"), "</li>"
        items.append(
            f'\n  <li value="{_v(m["rank"])}" class="mark-{_v(status)}">'
            f'<span class="answer">{_v(m["answer"])}</span>\n    {why}{end}'
        )
    if not items:
        items.append(
            f'\n  <li class="muted">{gettext("no answers (scored as an empty ranking)")}</li>'
        )
    return mark_safe(f'<ol class="marks">{"".join(items)}\n</ol>')


@register.simple_tag
def unjudged_rows(unjudged: Iterable[Mapping[str, Any]]) -> SafeString:
    """The ``<tr>`` of each unjudged answer (``selectors.unjudged_answers``): question,
    best rank, answer, and where it is (in the pool, not pooled, matching nothing, or
    beyond L')."""
    states = {
        "pooled": gettext("in the pool"),
        "poolable": gettext("not pooled"),
        "empty_key": gettext("matches nothing (empty key)"),
        "": gettext("beyond L'"),
    }
    rows = []
    for u in unjudged:
        state = next((k for k in ("pooled", "poolable", "empty_key") if u[k]), "")
        rows.append(
            f'<tr><td class="qid">{_v(u["question_id"])}</td><td class="num">{_v(u["rank"])}'
            f"</td><td>{_v(u['answer'])}</td><td>{states[state]}</td></tr>"
        )
    return mark_safe("".join(rows))
