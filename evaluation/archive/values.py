"""The values of an archive's rows: the field checks, the row and table shapes that keep
repeated values once, and the budgets' constants (used by ``validation.Archive``)."""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from array import array

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from annotate.models import MatchingMode
from evaluation.metrics.text_rules import CONTROL_CHARACTERS, refused_character

from .format import (
    MAX_JSON_DEPTH,
    json_depth,
    parse_when,
)

_INT_MAX = 2**31 - 1
_username = UnicodeUsernameValidator()
_INT_TEXT = re.compile(r"-?[0-9]{1,30}", re.ASCII)


def _is_int(value, lo: int = 0, hi: int = _INT_MAX) -> bool:
    if isinstance(value, str):
        value = value.strip()
        # ASCII digits: "²".isdigit() is true, but int() refuses it
        if not _INT_TEXT.fullmatch(value):
            return False
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _is_json_int(value, lo: int = 0, hi: int = _INT_MAX) -> bool:
    """A JSON number in range (not its text, as a CSV cell would be)."""
    return _is_int(value, lo, hi) and not isinstance(value, str)


def _is_when(value) -> bool:
    if value in ("", None):
        return True
    try:
        parse_when(value)
    except (TypeError, ValueError):
        return False
    return True


def _is_username(value) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= 150:
        return False
    try:
        _username(value)
    except ValidationError:
        return False
    return True


def _is_text_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _variants(text: str | None):
    """A string's variants as strings.csv writes them (a JSON list of strings, or empty
    for none); None when the text is not JSON, or nests deeper than a list (refused
    before it is parsed)."""
    if not text:
        return []
    if json_depth(text, 1) > 1:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _control_text(text: str) -> str | None:
    """Why ``text`` is refused for the first refused character it holds (the one rule of
    files, forms and the API, ``CONTROL_CHARACTERS``, named by ``refused_character``); None
    when it holds none."""
    found = CONTROL_CHARACTERS.search(text)
    if found is None:
        return None
    return gettext("holds %(character)s") % {"character": refused_character(found.group())}


def _control(value) -> str | None:
    """Why a JSON value is refused for a control character anywhere in it (keys too);
    None when it holds none."""
    if isinstance(value, str):
        return _control_text(value)
    if isinstance(value, dict):
        items = (x for kv in value.items() for x in kv)
        return next((m for x in items if (m := _control(x))), None)
    if isinstance(value, list):
        return next((m for v in value if (m := _control(v))), None)
    return None


_COLLECTION_CHECKS = {
    "name": lambda v: isinstance(v, str) and 0 < len(v.strip()) and len(v) <= 200,
    "description": lambda v: isinstance(v, str),
    "guidelines": lambda v: isinstance(v, str),
    "matching_mode": lambda v: v in MatchingMode.values,
    "max_output_size": lambda v: _is_json_int(v, 1, 32767),
    "open_for_submissions": lambda v: isinstance(v, bool),
    "leaderboard_published": lambda v: isinstance(v, bool),
    "judgment_version": lambda v: _is_json_int(v),
}
_RUN_KEYS = {"name", "owner", "description", "uploaded_at", "source_name", "sha256", "format"}


def too_deep() -> str:
    """A JSON member or line nested deeper than MAX_JSON_DEPTH, in the reader's language."""
    return gettext("JSON nested more than %(depth)s deep; the format needs no more") % {
        "depth": MAX_JSON_DEPTH
    }


_UNREADABLE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,
    RuntimeError,
    EOFError,
    OSError,
    ValueError,
    zlib.error,
)


def _column_index(header: list[str]) -> dict[str, int]:
    return {column: i for i, column in enumerate(header)}


class _OverBudget(Exception):
    """More rows than the archive's memory budget admits (``max_rows``)."""


class Row(tuple):
    """A CSV row of an archive, read by column name (``row["key"]``) yet as small as a
    tuple: an import holds every row until it writes them."""

    __slots__ = ()
    columns: dict[str, int] = {}

    def __getitem__(self, name):
        return tuple.__getitem__(self, self.columns[name])

    def get(self, name, default=None):
        i = self.columns.get(name)
        return default if i is None else tuple.__getitem__(self, i)


class Table:
    """The rows of a CSV member with their line numbers; iterating gives (line, row)."""

    def __init__(self):
        self.lines = array("L")
        self.rows: list[Row] = []

    def __iter__(self):
        return zip(self.lines, self.rows, strict=True)

    def __len__(self) -> int:
        return len(self.rows)

    def append(self, line: int, row: Row) -> None:
        self.lines.append(line)
        self.rows.append(row)


# columns whose values repeat from row to row: each distinct value is held once
_SHARED = frozenset(
    {
        "question_id",
        "run",
        "rank",
        "score",
        "synset_id",
        "level",
        "source",
        "judged_by",
        "status",
        "assessors",
        "assessor",
        "adjudicator",
        "k",
        "version",
    }
)
_CHUNK = 1 << 20
