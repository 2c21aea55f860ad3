"""The rows of strings in the judging workspace's synset cards and incorrect list.

A question may hold 1,000 strings, and the template engine costs 10-15 variable lookups a
row (~40 ms of CPU a page, twice the whole request: bench/judge_bench.py); these rows are
therefore formatted by ``format_html_join`` here, which escapes every value.  Everything
else of the page, the candidate rows with their forms included, is in
``templates/annotate/question_judge.html``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ..selectors import WorkspaceString

register = template.Library()

_TICK = '<input type="checkbox" name="strings" value="{0}" tabindex="-1" aria-label="tick">'
_EDIT = ' <a href="?edit={0}" class="edit-link small" tabindex="-1">edit</a>'
_MEMBER = ('<li class="item member" tabindex="0" data-item data-id="{0}" data-token="{1}" '
           'data-synset="{2}">{tick} <span class="badge level-{3}">{4}</span> '
           '<span class="text">{5}</span>{6}{edit}</li>')
_WRONG = ('<li class="item wrong" tabindex="0" data-item data-id="{0}" data-token="{1}">'
          '<span class="text">{5}</span>{6}{edit}</li>')
# (kind, may_write) -> the row's format; {0} pk, {1} token, {2} synset id, {3} level rank,
# {4} level code, {5} text, {6} the other spellings
_ROWS = {(kind, may_write): row.replace("{tick}", _TICK if may_write else "")
         .replace("{edit}", _EDIT if may_write else "")
         for kind, row in (("member", _MEMBER), ("wrong", _WRONG)) for may_write in (True, False)}


@register.simple_tag
def also(variants: Sequence[str]) -> SafeString | str:
    """The other spellings of a string (same matching key), or ""."""
    if not variants:
        return ""
    return format_html(' <span class="variants small muted" title="other spellings with the '
                       'same matching key">also: {}</span>', " · ".join(variants))


@register.simple_tag(takes_context=True)
def string_rows(context: template.Context, strings: Iterable[WorkspaceString],
                kind: str) -> SafeString:
    """The ``<li>`` rows of ``strings``: ``member`` (in a synset) or ``wrong`` (judged
    incorrect), with a tick box and an edit link when the page may write."""
    fmt = _ROWS[kind, bool(context.get("may_write"))]
    return format_html_join("", fmt, (
        (s.pk, s.token, s.synset_id, s.level_rank, s.level_obj.code if s.level_obj else "",
         s.text, also(s.variants)) for s in strings))
