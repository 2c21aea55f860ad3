"""Exports of a collection (docs/formats.md): its judgments, questions and audit trail.

They are written by the product's one CSV writer (``evaluation.metrics.csvio``): a cell
with a line break, quote or separator is quoted, and a cell a spreadsheet would run as a
formula gets a leading single quote, which the parsers take off again, so an export
re-imports unchanged (``annotate.imports``)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING

from evaluation.metrics.csvio import write_csv

from .judgments_csv import HEADER, judgment_rows
from .models import AnswerSynset, Collection, JudgingLayer, JudgmentEvent, Question
from .selectors import attach_assessors

if TYPE_CHECKING:
    from .edits import AnyUser


# -- exports ----------------------------------------------------------------------------------
def _synset_ids(collection: Collection) -> dict[int, str]:
    """Synset pk -> the synset_id an export writes: its label (the id in the file it was
    imported from), else its ordinal; unique within each question (labels claim theirs
    first, and a clash gets a suffix ``-2``, ``-3``, ...)."""
    by_question: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for pk, q, ordinal, label in AnswerSynset.objects.filter(
        question__collection=collection
    ).values_list("pk", "question_id", "ordinal", "label"):
        by_question[q].append((pk, ordinal, label))
    out: dict[int, str] = {}
    for synsets in by_question.values():
        used: set[str] = set()
        for pk, ordinal, label in sorted(synsets, key=lambda s: (not s[2], s[1])):
            base = name = label or str(ordinal)
            n = 1
            while name in used:
                n += 1
                name = f"{base}-{n}"
            used.add(name)
            out[pk] = name
    return out


def export_judgments(collection: Collection) -> str:
    """Judgments CSV (DESIGN.md section 6): one row per spelling of each judged string
    (its text, then its variants, all with the string's judgment), synsets by their label
    or ordinal, judged-incorrect strings with empty synset_id and level; extra columns
    question, assessor, updated.  Re-imported, the rows fold back into the same strings."""
    return write_csv(HEADER, judgment_rows(collection, _synset_ids(collection)))


def export_questions(collection: Collection) -> str:
    """Questions CSV: question_id,question plus status and assessors."""
    questions = list(Question.objects.filter(collection=collection).order_by("id"))
    attach_assessors(questions)
    return write_csv(
        ["question_id", "question", "status", "assessors"],
        ([q.qid, q.text, q.status, " ".join(q.assessor_names)] for q in questions),
    )


def export_events(collection: Collection, *, reader: AnyUser | None = None) -> str:
    """The audit trail: every JudgmentEvent of the collection, oldest first, but those of
    the layers ``reader`` is blind to (``JudgingLayerQuerySet.blind_to``)."""
    events = (
        JudgmentEvent.objects.filter(collection=collection)
        .exclude(layer__in=JudgingLayer.objects.blind_to(reader).values("pk"))
        .select_related("user", "question")
        .order_by("id")
    )
    return write_csv(
        ["id", "created_at", "user", "question_id", "action", "before", "after"],
        (
            [
                e.pk,
                e.created_at.isoformat(timespec="seconds"),
                e.user.get_username() if e.user_id else "",
                e.question.qid if e.question_id else "",
                e.action,
                json.dumps(e.before, ensure_ascii=False),
                json.dumps(e.after, ensure_ascii=False),
            ]
            for e in events.iterator(2000)
        ),
    )
