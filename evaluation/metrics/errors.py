"""Errors of the input parsers: every problem with its file and line number."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


def gettext_noop(message: str) -> str:
    """Marks a msgid built before it is shown (xgettext finds it by this name); ``_()``
    translates it where it is used."""
    return message


MAX_ISSUES = 1000  # collected per file; far more than the 20 every report must show
TRUNCATED = gettext_noop("too many errors; stopped counting")  # English; shown as _(TRUNCATED)


def _identity(message: str) -> str:
    return message


# The translator of every message the parsers give people.  The engine knows no Django: by
# default messages stay English (the command-line tools); the web app installs Django's
# ``gettext`` at start-up (evaluation.apps), which translates into the language active in
# the thread (the request's, or a job's under ``translation.override``).
_translator: Callable[[str], str] = _identity


def set_translator(translator: Callable[[str], str] | None) -> None:
    """Install ``translator`` for the parsers' messages (None: back to English)."""
    global _translator
    _translator = translator or _identity


def _(message: str) -> str:
    """``message`` (an English msgid with named ``%(name)s`` placeholders) in the reader's
    language, by the installed translator.  xgettext finds the msgids by this name."""
    return _translator(message)


def is_truncated(issue: Issue) -> bool:
    """Whether ``issue`` is the note that counting stopped (made in whatever language)."""
    return issue.line is None and (issue.truncated or issue.message in (TRUNCATED, _(TRUNCATED)))


def truncated_note(file: str) -> Issue:
    """The last issue of a list that stopped counting, in the reader's language."""
    return Issue(file, None, _(TRUNCATED), truncated=True)


@dataclass(frozen=True)
class Issue:
    file: str
    line: int | None
    message: str
    # the note that counting stopped (``truncated_note``), whatever its language
    truncated: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


def sort_issues(issues) -> list[Issue]:
    """Issues in the order a reader wants them: file by file (in the order the files come),
    and in each file those about the whole file first, then by line (stable, so a line's
    issues keep the order they were found in), the note that counting stopped last."""
    issues = list(issues)
    files = {f: n for n, f in enumerate(dict.fromkeys(i.file for i in issues))}
    return sorted(
        issues,
        key=lambda i: (
            files[i.file],
            is_truncated(i),
            i.line is not None,
            i.line or 0,
        ),
    )


class InputError(ValueError):
    """Raised by a parser when a file is bad; ``issues`` lists every problem found, sorted
    by line."""

    def __init__(self, issues: list[Issue]):
        self.issues = sort_issues(issues)
        super().__init__(self.format())

    def format(self, limit: int | None = 20) -> str:
        """The issues, one a line; with ``limit``, the first ``limit`` and a count of the
        rest (``None``: all of them)."""
        shown = self.issues if limit is None else self.issues[:limit]
        lines = [str(issue) for issue in shown]
        more = len(self.issues) - len(shown)
        if more > 0:
            lines.append(_("... and %(count)s more error(s)") % {"count": more})
        return "\n".join(lines)


class IssueList:
    """Collects issues for one file; ``raise_if_any`` ends parsing with an InputError."""

    def __init__(self, file: str):
        self.file = file
        self.issues: list[Issue] = []
        self.truncated = False

    def add(self, line: int | None, message: str) -> None:
        """Record one problem (past MAX_ISSUES they are only counted as too many)."""
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(Issue(self.file, line, message))
        else:
            self.truncated = True

    def __bool__(self) -> bool:
        return bool(self.issues)

    def all(self) -> list[Issue]:
        """Every issue, sorted by line, with a last note when counting stopped."""
        note = [truncated_note(self.file)] if self.truncated else []
        return sort_issues(self.issues) + note

    def raise_if_any(self) -> None:
        if self.issues:
            raise InputError(self.all())


def merge_issues(file: str, *groups) -> list[Issue]:
    """The issues several checks of one file found, as one list sorted by line and at most
    MAX_ISSUES long.  A check that stopped counting saw the file only up to its last issue:
    issues of the other checks past that line are left out too, and a last note says the
    list is incomplete."""
    stop = None
    items: list[Issue] = []
    for group in groups:
        group = list(group)
        if any(is_truncated(i) for i in group):
            last = max((i.line for i in group if i.line is not None), default=0)
            stop = last if stop is None else min(stop, last)
        items += [i for i in group if not is_truncated(i)]
    if stop is not None:
        items = [i for i in items if i.line is None or i.line <= stop]
    items = sort_issues(items)
    if stop is not None or len(items) > MAX_ISSUES:
        items = [*items[:MAX_ISSUES], truncated_note(file)]
    return items
