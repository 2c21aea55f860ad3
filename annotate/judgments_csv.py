"""The rows of the judgments CSV export (DESIGN.md section 6), read as plain tuples.

``judgment_rows`` streams them from one ``values_list`` query (its joins to the question,
the level and the assessor done by the database, chunk by chunk with ``iterator``) where
the export built a model instance and three related ones per judged string: 7.9 s at
size M (issue 24).  Same rows, same order: the export's bytes do not change
(tests/annotate/test_judgments_csv.py compares them with the model-instance way).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from django.contrib.auth import get_user_model
from django.db.models import F

from .models import AnswerString, Collection

HEADER = ["question_id", "synset_id", "answer", "level", "question", "assessor", "updated"]
CHUNK = 5000


def judgment_rows(collection: Collection, synset_ids: Mapping[int, str]) -> Iterator[list[str]]:
    """One row per spelling of each judged string of ``collection`` (its text, then its
    variants, all with the string's judgment), by question, synset ordinal (judged
    incorrect last) and string: question_id, synset_id (``synset_ids``: synset pk -> the
    id the export writes), answer, level code, question text, assessor's username and the
    time judged (ISO 8601, seconds)."""
    username = f"judged_by__{get_user_model().USERNAME_FIELD}"
    strings = (
        AnswerString.objects.filter(question__collection=collection, judged_at__isnull=False)
        .order_by("question_id", F("synset__ordinal").asc(nulls_last=True), "id")
        .values_list(
            "question__qid",
            "synset_id",
            "text",
            "variants",
            "level__code",
            "question__text",
            username,
            "judged_at",
        )
    )
    for qid, synset, text, variants, level, question, assessor, judged_at in strings.iterator(
        CHUNK
    ):
        rest = [
            level or "",
            question,
            assessor if assessor is not None else "",
            judged_at.isoformat(timespec="seconds"),
        ]
        synset_id = synset_ids[synset] if synset else ""
        yield [qid, synset_id, text, *rest]
        for variant in variants:
            yield [qid, synset_id, variant, *rest]
