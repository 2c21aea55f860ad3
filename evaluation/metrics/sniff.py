"""What kind of run a file is (``detect_run_format``), with the standard library only:
``qa-score`` decides this before numpy is imported, to start the C reader early
(``fast.start``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

_LINE_END = re.compile(r"\r\n|\r|\n")
_INT = re.compile(r"[-+]?[0-9]+")
_POS_INT = re.compile(r"\+?0*[1-9][0-9]*")

Data = bytes | str


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line, without its end (LF, CRLF or CR)."""
    return enumerate(_LINE_END.split(text), start=1)


def _first_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` (as ``_lines`` splits them), found one at a time: the format
    is decided on the first line that is not blank."""
    start = 0
    for end in _LINE_END.finditer(text):
        yield text[start : end.start()]
        start = end.end()
    yield text[start:]


def _is_number(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


def detect_run_format(data: Data) -> str:
    """``qa`` (TSV or CSV with a question_id header) or ``trec`` (6 columns), from the
    first line that is not blank or a comment."""
    head = data[:65536]
    text = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
    for line in _first_lines(text.lstrip("\ufeff")):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.lower().startswith("question_id"):
            return "qa"
        tabs = line.split("\t")
        if len(tabs) in (3, 4) and _POS_INT.fullmatch(tabs[1].strip()):
            return "qa"
        fields = s.split()
        if len(fields) >= 6 and _INT.fullmatch(fields[3]) and _is_number(fields[4]):
            return "trec"
        return "qa"
    return "qa"
