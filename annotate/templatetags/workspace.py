"""The rows of answer strings in the judging workspace: candidates (each with its form),
strings in a synset card, strings judged incorrect.

A question may hold 1,000 strings, and the template engine costs 10-20 variable lookups a
row: rendered from a ``{% partialdef %}`` these rows took more CPU than the whole request
did before (bench/judge_bench.py, 100 synsets / 1,000 strings).  They are therefore
formatted here by ``format_html`` / ``format_html_join``, which escape every value, with
the CSRF input from Django's own ``csrf_input``.  Everything else of the page, the synset
cards included, is in ``templates/annotate/question_judge.html``.

Escaping is most of that work (seven values a row), and from one keypress to the next all
rows but one or two are the same: a row of a judged string depends only on its values, so
it is formatted once per process (``_row``, keyed by every value it shows), and so are the
rows of a synset joined (``_rows``).  A candidate's form holds the CSRF input, masked anew
for every response: only its text and its own inputs are kept."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from django import template
from django.template.backends.utils import csrf_input
from django.utils import translation
from django.utils.html import conditional_escape, escape, format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext

from ..workspace_selectors import WorkspaceString

register = template.Library()

_TICK = '<input type="checkbox" name="strings" value="{0}" tabindex="-1" aria-label="@tick@">'
_EDIT = ' <a href="?edit={0}" class="edit-link small" tabindex="-1">@edit@</a>'
_MEMBER = (
    '<li class="item member" tabindex="0" data-item data-id="{0}" data-token="{1}" '
    'data-synset="{2}">{tick} <span class="badge level-{3}">{4}</span> '
    '<span class="text">{5}</span>{6}{edit}</li>'
)
_WRONG = (
    '<li class="item wrong" tabindex="0" data-item data-id="{0}" data-token="{1}">'
    '<span class="text">{5}</span>{6}{edit}</li>'
)


@lru_cache(maxsize=16)
def _words(language: str) -> dict[str, str]:
    """The words of the rows people read, in ``language`` (the page's, ``get_language()``),
    escaped and with their braces doubled, to be put into the rows' formats as they are."""
    with translation.override(language):
        words = {
            "tick": gettext("tick"),
            "edit": gettext("edit"),
            "also": gettext("also:"),
            "spellings": gettext("other spellings with the same matching key"),
            "freq": gettext("number of runs that returned it"),
            "suggested": gettext("suggested synset {0}: {1} (a suggestion only)"),
            "similar": gettext("similar string"),
            "number": gettext("synset number"),
            "level": gettext("level"),
            "add": gettext("Add"),
            "new": gettext("New"),
        }
    kept = {"suggested"}  # a format itself: its {0} and {1} stay
    return {
        k: str(escape(v)) if k in kept else str(escape(v)).replace("{", "{{").replace("}", "}}")
        for k, v in words.items()
    }


def _in(fmt: str, language: str) -> str:
    """``fmt`` with its ``@word@`` markers replaced by the words in ``language``."""
    for key, word in _words(language).items():
        fmt = fmt.replace(f"@{key}@", word)
    return fmt


@lru_cache(maxsize=16)
def _row_formats(language: str) -> dict[tuple[str, bool], str]:
    """(kind, may_write) -> the row's format; {0} pk, {1} token, {2} synset id, {3} level
    rank, {4} level code, {5} text, {6} the other spellings."""
    return {
        (kind, may_write): _in(
            row.replace("{tick}", _TICK if may_write else "").replace(
                "{edit}", _EDIT if may_write else ""
            ),
            language,
        )
        for kind, row in (("member", _MEMBER), ("wrong", _WRONG))
        for may_write in (True, False)
    }


@register.filter(expects_localtime=True)
def event_time(value: datetime) -> str:
    """When a history event happened, in local time, as ``date:"m-d H:i:s"`` shows it:
    Django's ``date`` filter looks its format up anew at every call, which cost more than the
    rest of the history (30 lines at every keypress)."""
    return value.strftime("%m-%d %H:%M:%S")


_ALSO = ' <span class="variants small muted" title="@spellings@">@also@ {}</span>'


@register.simple_tag
def also(variants: Sequence[str], language: str | None = None) -> SafeString | str:
    """The other spellings of a string (same matching key), or "" (in ``language``, by
    default the page's)."""
    if not variants:
        return ""
    return format_html(_in(_ALSO, language or get_language()), " · ".join(variants))


# Per process, each cache holds at most a few MB: a row is about 0.7 KB with its key, and
# 8,192 of them are the rows of 8 pages of 1,000 strings.  The keys are the plain values
# read from the database (a SafeString equal to one of them would share its entry).
@lru_cache(maxsize=8192)
def _row(
    fmt: str,
    language: str,
    pk: int,
    token: str,
    synset_id: int | None,
    rank: int | None,
    code: str,
    text: str,
    variants: tuple[str, ...],
) -> SafeString:
    return format_html(fmt, pk, token, synset_id, rank, code, text, also(variants, language))


def _join(fmt: str, language: str, rows: tuple[tuple[Any, ...], ...]) -> SafeString:
    return format_html_join("", "{}", ((_row(fmt, language, *row),) for row in rows))


# The rows of a synset joined, as the last keypresses left them: joining them again cost as
# much as the rest of its card.  Only short lists are kept (every state of a long list of
# incorrect strings would be), at most 512 x 32 rows.
_JOINED_ROWS = 32
_joined = lru_cache(maxsize=512)(_join)


@register.simple_tag(takes_context=True)
def string_rows(
    context: template.Context, strings: Iterable[WorkspaceString], kind: str
) -> SafeString:
    """The ``<li>`` rows of ``strings``: ``member`` (in a synset) or ``wrong`` (judged
    incorrect), with a tick box and an edit link when the page may write."""
    rows = tuple(
        (
            s.pk,
            s.token,
            s.synset_id,
            s.level_rank,
            s.level_obj.code if s.level_obj else "",
            s.text,
            tuple(s.variants),
        )
        for s in strings
    )
    language = get_language()
    fmt = _row_formats(language)[kind, bool(context.get("may_write"))]
    return (_joined if len(rows) <= _JOINED_ROWS else _join)(fmt, language, rows)


_CANDIDATE = (
    '<li class="item cand" tabindex="0" data-item data-id="{0}" data-token="{1}">{2}{3}</li>'
)
_CANDIDATE_TEXT = '<span class="text">{0}</span>{1}{2}{3}'
_FREQ = ' <span class="freq small muted" title="@freq@">×{}</span>'
_SUGGEST = (
    ' <span class="suggest small" title="@suggested@">'
    '→ {0}? <span class="suggest-reason muted">{1}</span></span>'
)
# the form's inputs that are the same on every row of one response (the CSRF input is
# masked anew for each response), then those of the row, formatted once per process
_ROW_FORM = '<form class="row-form" method="post" action="{0}" hx-post="{0}">{1}{2}</form>'
_ROW_FORM_PAGE = '{0}<input type="hidden" name="version" value="{1}">'
_ROW_FORM_FIELDS = (
    '<input type="hidden" name="string" value="{pk}">'
    '<input type="hidden" name="expect" value="{token}">'
    '<input type="number" name="ordinal" min="1" aria-label="@number@" '
    'placeholder="#" class="ordinal-in"{value}>'
    '<select name="level" aria-label="@level@">{options}</select>'
    '<button type="submit" name="op" value="add" tabindex="-1">@add@</button>'
    '<button type="submit" name="op" value="new" tabindex="-1">@new@</button>'
    '<button type="submit" name="op" value="incorrect" tabindex="-1">✗</button>'
)


@lru_cache(maxsize=4096)
def _candidate_text(
    text: str,
    variants: tuple[str, ...],
    freq: int,
    ordinal: int | None,
    reason: str,
    language: str,
) -> SafeString:
    """A candidate's text, other spellings, run frequency and suggested synset, in
    ``language``."""
    return format_html(
        _CANDIDATE_TEXT,
        text,
        also(variants, language),
        format_html(_in(_FREQ, language), freq) if freq else "",
        format_html(_in(_SUGGEST, language), ordinal, reason or _words(language)["similar"])
        if ordinal is not None
        else "",
    )


@lru_cache(maxsize=4096)
def _candidate_fields(
    pk: int, token: str, ordinal: int | None, options: str, language: str
) -> SafeString:
    """A candidate's own inputs in its form: the suggestion filled in as its synset number."""
    return format_html(
        _in(_ROW_FORM_FIELDS, language),
        pk=pk,
        token=token,
        value=format_html(' value="{}"', ordinal) if ordinal is not None else "",
        options=options,
    )


@register.simple_tag(takes_context=True)
def candidate_rows(context: template.Context, candidates: Iterable[WorkspaceString]) -> SafeString:
    """The ``<li>`` rows of the unjudged candidates: text, other spellings, run frequency,
    suggested synset and, when the page may write, a form to judge it (the suggestion
    filled in as its synset number)."""
    may_write = bool(context.get("may_write"))
    language = get_language()
    if may_write:
        page = format_html(_ROW_FORM_PAGE, csrf_input(context.request), context["question"].version)
        options = format_html_join(
            "", '<option value="{0}">{0}</option>', ((lv.code,) for lv in context["levels"])
        )
        url = conditional_escape(context["act_url"])

    def row(c: WorkspaceString) -> tuple[object, ...]:
        ordinal = c.suggestion.ordinal if c.suggestion is not None else None
        text = _candidate_text(
            c.text,
            tuple(c.variants),
            c.freq,
            ordinal,
            c.suggestion_reason if ordinal is not None else "",
            language,
        )
        form = (
            format_html(
                _ROW_FORM, url, page, _candidate_fields(c.pk, c.token, ordinal, options, language)
            )
            if may_write
            else ""
        )
        return (c.pk, c.token, text, form)

    return format_html_join("", _CANDIDATE, (row(c) for c in candidates))
