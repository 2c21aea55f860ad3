"""The one CSV writer and reader of every file the product writes (docs/formats.md,
"Quoting and spreadsheet formulas").  Pure Python: the web apps and the engine use it.

Writing, cell by cell:

- ``None`` is an empty cell; a number (int or float, not bool) is written as a number and
  never escaped (``float_format`` formats floats; NaN is an empty cell).
- Every other value is text.  **Formulas:** a text cell that starts with a formula
  character (``=``, ``+``, ``-``, ``@``, TAB or CR), possibly after some single quotes,
  gets one more leading single quote: ``=1+1`` -> ``'=1+1``, ``'=1+1`` -> ``''=1+1``.
  Any other text is written as it is (``'Tis`` and ``''Snow Country''`` stay).
- **Quoting:** a cell is put in double quotes (a ``"`` inside doubled) when it contains CR,
  LF, ``"``, a separator (``,``, ``;``, TAB) or ``#`` (pandas' ``comment="#"`` would
  otherwise cut the line), when it starts with U+FEFF (at the start of a file readers take
  it for a byte-order mark and drop it), and when it is the only, empty cell of its row.
  Rows end with LF.
- **Preamble:** ``# key=value`` lines before the header.  In the value, ``%``, CR, LF, TAB
  and ``"`` are written ``%25``, ``%0D``, ``%0A``, ``%09``, ``%22``, and a ``,`` or ``;``
  that comes before ``=``, ``+``, ``-``, ``@`` or ``'`` is written ``%2C`` / ``%3B``: a
  preamble line is one line, and a spreadsheet that splits it at its commas finds no cell
  starting with a formula.

(The csv module's QUOTE_MINIMAL quotes the characters of its line terminator only: with
``lineterminator="\n"`` a CR is written bare, and a reader then starts a new row there, or
fails.  So this module decides the quoting itself.)

Reading undoes exactly that: a cell that starts with one or more single quotes followed by
a formula character loses one quote; every ``%XX`` of a preamble value is its character.
So ``read_csv(write_csv(h, rows, p))`` gives back every text cell and preamble value.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import numbers
import re
from collections.abc import Iterable, Iterator, Mapping

from .errors import _

FORMULA_CHARS = "=+-@\t\r"
# text that a spreadsheet would run: quotes, then a formula character
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_ESCAPED = re.compile(r"'+[=+\-@\t\r]")
_STARTS = frozenset("=+-@\t\r'")  # a cell starting otherwise is never escaped
_needs_quotes = re.compile(r'[\r\n",;\t#]').search
_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_PREAMBLE_OUT = re.compile(r'[%\r\n\t"]|[,;](?=[=+\-@\'])')
_PREAMBLE_IN = re.compile(r"%([0-9A-Fa-f]{2})")


class CsvFormatError(ValueError):
    """A file that is not CSV as ``write_csv`` writes it; ``line`` is 1-based or None."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(
            _("line %(line)s: %(message)s") % {"line": line, "message": message}
            if line
            else message
        )


def neutralise(text: str) -> str:
    """``text`` with formulas neutralised (one more leading quote when needed)."""
    return "'" + text if text[:1] in _STARTS and _FORMULA.match(text) else text


def restore(cell: str) -> str:
    """Undo ``neutralise``: ``restore(neutralise(s)) == s`` for every string."""
    return cell[1:] if cell[:1] == "'" and _ESCAPED.match(cell) else cell


def _text(text: str) -> str:
    if text[:1] in _STARTS and _FORMULA.match(text):
        text = "'" + text
    if _needs_quotes(text) or text[:1] == "\ufeff":
        return '"' + text.replace('"', '""') + '"'
    return text


def cell(value, float_format: str | None = None) -> str:
    """One cell as ``write_csv`` writes it (escaped and, if needed, quoted)."""
    if type(value) is str:
        return _text(value)
    if value is None:
        return ""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if isinstance(value, numbers.Integral):
            return str(int(value))
        value = float(value)
        if math.isnan(value):
            return ""
        return format(value, float_format) if float_format else repr(value)
    return _text(str(value))


def row_text(values: Iterable, float_format: str | None = None) -> str:
    """One row, LF-terminated."""
    cells = [_text(v) if type(v) is str else cell(v, float_format) for v in values]
    if not cells:
        raise ValueError("a CSV row needs at least one cell")
    if cells == [""]:
        cells = ['""']  # an empty line would be skipped by readers
    return ",".join(cells) + "\n"


def preamble_value(value) -> str:
    """A preamble value as written: one line, no formula after a comma."""
    return _PREAMBLE_OUT.sub(lambda m: "".join(f"%{ord(c):02X}" for c in m.group()), str(value))


#: the float cells of the score CSVs when not asked for full precision (6 decimals)
READABLE_FLOAT_FORMAT = ".6f"


def write_csv(
    header: Iterable[str],
    rows: Iterable[Iterable],
    preamble: Mapping[str, object] | None = None,
    *,
    float_format: str | None = None,
) -> str:
    """The CSV text: ``# key=value`` lines, the header, the rows (see the module doc)."""
    out = []
    for key, value in (preamble or {}).items():
        if not _KEY.fullmatch(key):
            raise ValueError(f"preamble key {key!r}: letters, digits, _ . - only")
        out.append(f"# {key}={preamble_value(value)}\n")
    out.append(row_text(header))
    out.extend(row_text(row, float_format) for row in rows)
    return "".join(out)


def read_csv(text: str | bytes) -> tuple[dict[str, str], list[str], list[list[str]]]:
    """(preamble, header, rows) of a file ``write_csv`` wrote; text cells as they were
    given to it (numbers come back as their text).  Blank lines are skipped; LF or CRLF
    line ends.  Raises CsvFormatError (a ValueError) for malformed CSV."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    text = text.removeprefix("\ufeff")
    preamble: dict[str, str] = {}
    pos, line = 0, 1
    while text.startswith("#", pos) or text.startswith("\n", pos) or text.startswith("\r\n", pos):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        raw = text[pos:end].removesuffix("\r")
        if raw:
            key, eq, value = raw[1:].lstrip(" ").partition("=")
            if not eq or not _KEY.fullmatch(key):
                raise CsvFormatError(
                    _("expected a '# key=value' line, found %(found)s") % {"found": repr(raw[:40])},
                    line,
                )
            preamble[key] = _PREAMBLE_IN.sub(lambda m: chr(int(m.group(1), 16)), value)
        pos, line = end + 1, line + 1
    # split at LF only: a CR outside quotes is malformed, never a line end of its own
    reader = csv.reader(io.StringIO(text[pos:], newline="\n"), strict=True)
    records = []
    try:
        for record in reader:
            if record:
                records.append([c[1:] if c[:1] == "'" and _ESCAPED.match(c) else c for c in record])
    except csv.Error as e:
        raise CsvFormatError(
            _("malformed CSV: %(error)s") % {"error": e}, line - 1 + reader.line_num
        ) from e
    if not records:
        raise CsvFormatError(_("no header"), line)
    return preamble, records[0], records[1:]


def read_csv_lines(
    lines: Iterable[str],
) -> tuple[dict[str, str], list[str], Iterator[list[str]]]:
    """``read_csv`` over the lines of a text (a file opened with ``newline="\\n"``), its
    rows read as they are iterated, so that a large file is never held whole: (preamble,
    header, rows).  Raises CsvFormatError for malformed CSV, here for the preamble and the
    header, while iterating for a row."""
    it = iter(lines)
    preamble: dict[str, str] = {}
    line, first = 1, None
    for text in it:
        if line == 1:
            text = text.removeprefix("\ufeff")
        if not (text.startswith("#") or text in ("\n", "\r\n")):
            first = text
            break
        raw = text.removesuffix("\n").removesuffix("\r")
        if raw:
            key, eq, value = raw[1:].lstrip(" ").partition("=")
            if not eq or not _KEY.fullmatch(key):
                raise CsvFormatError(
                    _("expected a '# key=value' line, found %(found)s") % {"found": repr(raw[:40])},
                    line,
                )
            preamble[key] = _PREAMBLE_IN.sub(lambda m: chr(int(m.group(1), 16)), value)
        line += 1
    reader = csv.reader(it if first is None else itertools.chain((first,), it), strict=True)

    def records() -> Iterator[list[str]]:
        try:
            for record in reader:
                if record:
                    yield [c[1:] if c[:1] == "'" and _ESCAPED.match(c) else c for c in record]
        except csv.Error as e:
            raise CsvFormatError(
                _("malformed CSV: %(error)s") % {"error": e}, line - 1 + reader.line_num
            ) from e

    rows = records()
    header = next(rows, None)
    if header is None:
        raise CsvFormatError(_("no header"), line)
    return preamble, header, rows


def read_records(text: str | bytes) -> list[dict[str, str]]:
    """The rows of ``read_csv(text)`` as dicts keyed by the header; a row with another
    number of cells than the header is a CsvFormatError."""
    _preamble, header, rows = read_csv(text)
    out = []
    for i, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise CsvFormatError(
                _("row %(row)s has %(cells)s cells, the header %(header)s")
                % {"row": i, "cells": len(row), "header": len(header)}
            )
        out.append(dict(zip(header, row, strict=True)))
    return out
