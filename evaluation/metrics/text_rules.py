"""What text every file the product reads may hold, and the one message of each refusal
(control characters, NUL, an answer whose matching key is empty): shared by the parsers,
the layers CSV and the collection archive."""

from __future__ import annotations

import re

from .errors import Issue
from .sniff import _lines

# A control character is refused wherever it stands: NUL because no database text column
# can store one (PostgreSQL refuses it), the others because the forms refuse them
# (config.text.CONTROL_CHARACTERS, the same set: config may not import the engine, and
# tests/test_control_characters_in_files.py checks the two agree), so that nothing a file
# brings in is text the organizer could not type, edit or delete.  Every file the product
# imports is checked line by line.  Tab, newline and carriage return are text (or
# separators).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
NUL_BYTE = "contains a NUL byte"


def control_message(line: str) -> str | None:
    """Why ``line`` is refused for the first control character it holds; None when it
    holds none."""
    found = CONTROL_CHARACTERS.search(line)
    if found is None:
        return None
    if found.group() == "\x00":
        return NUL_BYTE
    return (
        f"contains the control character U+{ord(found.group()):04X}; only tab, newline and "
        "carriage return are allowed in text"
    )


def control_issues(text: str, file: str) -> list[Issue]:
    """The lines of ``text`` that hold a control character, each an issue naming it; lines
    are counted as every reader counts them.  The rule of every import: the parsers' line
    reader applies it to each line, and a reader of its own (the layers CSV) to its text."""
    if not CONTROL_CHARACTERS.search(text):
        return []
    return [
        Issue(file, n, message)
        for n, line in _lines(text)
        if (message := control_message(line)) is not None
    ]


def empty_key_message(qid: str, answer: str, match: str) -> str:
    """The one refusal of an answer whose matching key is empty ("..." under
    ``normalized``, "the" under ``squad``), by every reader of judged answers -- this
    parser, the web imports, a collection archive: an empty key matches nothing (DESIGN.md
    section 4), so such a judgment would never credit an answer.  Runs accept such answers
    (they match nothing)."""
    return (
        f"question {qid!r}: answer {answer!r} has an empty matching key under {match} "
        "matching (an empty key matches nothing): leave it out"
    )
