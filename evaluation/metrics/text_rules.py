"""What text every file the product reads may hold, and the one message of each refusal
(control characters, separators and a byte-order mark inside text, NUL, an answer whose
matching key is empty): shared by the parsers, the layers CSV and the collection archive."""

from __future__ import annotations

import re

from .errors import Issue, _, gettext_noop
from .sniff import _lines

# The one rule of what text may hold, for every way in (forms, files, archives, the API): a
# character of this set is refused wherever it stands.  It is every Unicode control
# character (category Cc: C0, DEL and C1, U+0085 included) but tab, newline and carriage
# return, the line and paragraph separators U+2028 and U+2029 (categories Zl and Zp: line
# ends to some programs and none to others, so a line would not be the same line
# everywhere), and U+FEFF inside text (a byte-order mark: readers drop one at the very start
# of a file, as an encoding marker; anywhere else it is an invisible character that makes
# two equal-looking strings differ).  NUL is in it because no database text column can
# store one (PostgreSQL refuses it).  The forms' side re-states the set
# (config.text.CONTROL_CHARACTERS: config may not import an app, the engine no Django), as
# does the compiled run reader (_fastparse.c: refused_at, which steps aside for the line
# reader to refuse); tests/security/test_one_text_rule.py checks the two sets against the
# definition above, code point by code point, and tests/metrics/test_reader_text_rule.py
# that the C reader leaves every one of them to the line reader.  So nothing a file brings
# in is text the organizer could not type, edit or delete.  Every file the product imports
# is checked line by line.  Tab, newline and carriage return are text (or separators).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
NUL_BYTE = "contains a NUL byte"
# English msgids, translated where they are used (``refused_character``)
_NAMES = {
    "\u2028": gettext_noop(
        "the line separator U+2028 (end lines with LF or CRLF); only tab, newline and "
        "carriage return are allowed in text"
    ),
    "\u2029": gettext_noop(
        "the paragraph separator U+2029 (end lines with LF or CRLF); only tab, newline and "
        "carriage return are allowed in text"
    ),
    "\ufeff": gettext_noop(
        "U+FEFF (a byte-order mark, which may only open a file, before its first line)"
    ),
}


def refused_character(char: str) -> str:
    """What ``char`` (one of ``CONTROL_CHARACTERS``) is and what text may hold instead, for
    the messages of every reader: "a NUL byte", "the control character U+001B; only tab,
    newline and carriage return are allowed in text"..."""
    if char == "\x00":
        return _("a NUL byte")
    if char in _NAMES:
        return _(_NAMES[char])
    return _(
        "the control character U+%(code)s; only tab, newline and carriage return are "
        "allowed in text"
    ) % {"code": f"{ord(char):04X}"}


def control_message(line: str) -> str | None:
    """Why ``line`` is refused for the first refused character it holds
    (``CONTROL_CHARACTERS``); None when it holds none."""
    found = CONTROL_CHARACTERS.search(line)
    if found is None:
        return None
    return _("contains %(character)s") % {"character": refused_character(found.group())}


def control_issues(text: str, file: str) -> list[Issue]:
    """The lines of ``text`` that hold a refused character, each an issue naming it; lines
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
    return _(
        "question %(qid)s: answer %(answer)s has an empty matching key under %(match)s "
        "matching (an empty key matches nothing): leave it out"
    ) % {"qid": repr(qid), "answer": repr(answer), "match": match}
