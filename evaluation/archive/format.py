"""The archive format: its members, their columns by version, and how values are written
in it (times in ISO 8601, CSV members as ``csvio.write_csv`` writes them).  Version 1
archives name database ids in the audit trail; version 2 adds archive ids; version 3 the
assessors' independent layers (``layers.csv``, ``layer_judgments.csv``; DESIGN.md section
9); version 4 each level's ``examples``."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.conf import settings
from django.utils import timezone

from evaluation.metrics.csvio import read_csv

FORMAT = "qasynset-collection"
VERSION = 4
READS = (1, 2, 3, 4)  # versions collection_import reads
COLLECTION_FIELDS = (
    "name",
    "description",
    "guidelines",
    "matching_mode",
    "max_output_size",
    "open_for_submissions",
    "leaderboard_published",
    "judgment_version",
)
MEMBERS = (
    "manifest.json",
    "questions.csv",
    "synsets.csv",
    "strings.csv",
    "events.jsonl",
    "runs.json",
    "run_answers.csv",
)
LAYER_MEMBERS = ("layers.csv", "layer_judgments.csv")  # version 3 on
COLUMNS = {  # the CSV members' columns, by version
    1: {
        "questions.csv": ["question_id", "question", "status", "notes", "version", "assessors"],
        "synsets.csv": ["question_id", "synset_id", "note"],
        "strings.csv": [
            "question_id",
            "synset_id",
            "answer",
            "key",
            "level",
            "source",
            "judged_by",
            "judged_at",
            "created_at",
        ],
        "run_answers.csv": ["run", "question_id", "rank", "answer", "key", "score"],
    },
}
COLUMNS[2] = dict(
    COLUMNS[1],
    **{
        "synsets.csv": ["id", "question_id", "synset_id", "label", "note"],
        "strings.csv": [
            "id",
            "question_id",
            "synset_id",
            "answer",
            "variants",
            "key",
            "level",
            "source",
            "judged_by",
            "judged_at",
            "created_at",
        ],
    },
)
COLUMNS[3] = dict(
    COLUMNS[2],
    **{
        "layers.csv": [
            "question_id",
            "assessor",
            "k",
            "adjudicator",
            "gold_at",
            "version",
            "started_at",
            "done_at",
            "seconds",
        ],
        "layer_judgments.csv": [
            "question_id",
            "assessor",
            "string_id",
            "synset_id",
            "level",
            "judged_at",
        ],
    },
)
COLUMNS[4] = COLUMNS[3]  # version 4 changes the manifest only (levels' examples)


# audit events naming a run by its database id (mapped to the run's name in an archive; a
# withdrawn run is not in the archive, so its events keep only its name)
RUN_EVENTS = ("pool_run", "withdraw_run", "replace_run")

# The JSON members whose values are read whole (events.jsonl a line at a time).
JSON_MEMBERS = ("manifest.json", "runs.json", "events.jsonl")
# The deepest nesting of the format: an event's before -> strings -> a string ->
# variants (4 levels below the event object), the manifest's levels -> a level (3).  A
# deeper value is refused before it is parsed, so that no member reaches the recursion
# limit of the JSON parser.
MAX_JSON_DEPTH = 8
# a string (to its end, or to the text's end when unterminated: never scanned twice) or a
# bracket
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


def max_bytes() -> int:
    """The most an archive may hold once unpacked (all members together)."""
    return settings.ARCHIVE_MAX_MB * 1024 * 1024


def max_rows() -> int:
    """The most rows an archive may hold but its run answers: CSV rows and events
    together (its memory budget: an import holds these checked rows until it writes
    them)."""
    return settings.ARCHIVE_MAX_ROWS


def max_answers() -> int:
    """The most rows run_answers.csv may hold (read as a stream, never held: 8 bytes a row
    are kept, to find a rank given twice)."""
    return settings.ARCHIVE_MAX_ANSWERS


def max_json_bytes() -> int:
    """The most the JSON members may hold once unpacked, together (a parsed JSON value
    takes several times its text in memory)."""
    return settings.ARCHIVE_JSON_MAX_MB * 1024 * 1024


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep the arrays and objects of a JSON text nest, counted up to ``limit + 1``
    (without recursion: a text too deep for the JSON parser is measured as easily)."""
    depth = deepest = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def read_member_csv(text: str) -> tuple[list[str], list[dict]]:
    """(header, rows as dicts) of a member ``write_csv`` wrote (its formula escape undone); a row
    with too few or too many fields has None in it.  Raises ValueError (CsvFormatError) for
    text that is not CSV."""
    _, header, rows = read_csv(text)
    return header, [
        dict(zip(header, row, strict=True)) if len(row) == len(header) else {None: None}
        for row in rows
    ]


def iso(dt) -> str:
    """A time as the archive writes it: ISO 8601, empty for none."""
    return dt.isoformat() if dt else ""


def parse_when(value: str):
    """A time the archive wrote (``iso``), aware (UTC when it names no zone); None for
    empty.  ValueError for text that is not a time."""
    if not value:
        return None
    dt = datetime.fromisoformat(value)
    return dt if timezone.is_aware(dt) else timezone.make_aware(dt, UTC)
