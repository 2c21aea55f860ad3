"""Writes of the annotation app (STYLE.md habit 2).

Every function here is keyword-only, runs in one transaction and writes one
``JudgmentEvent``.  Judging operations lock their question row (``select_for_update``),
compare the version the page was rendered with, check that the edit is still meaningful
(the string is still in the state the assessor saw) and bump ``Question.version``; a stale
edit that is no longer meaningful raises ``Conflict`` and writes nothing.  Every change of a
judgment also bumps the collection's ``judgment_version`` (scores are cached by it).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from evaluation.models import Run, RunAnswer

from .models import (
    AnswerString,
    Collection,
    JudgmentEvent,
    Question,
    Source,
)

NIL = "NIL"


class Conflict(Exception):
    """A write refused because the question changed under the assessor (or the request
    no longer makes sense); nothing was written."""


def collection_judgments_changed(*, collection_id: int) -> None:
    """Bump the collection's judgment version: cached scores of older versions go stale."""
    Collection.objects.filter(pk=collection_id).update(
        judgment_version=F("judgment_version") + 1, judgments_changed_at=timezone.now())


# -- pooling (evaluation calls this) ------------------------------------------------------
@transaction.atomic
def pool_run(*, run: Run, by=None) -> int:
    """Add every distinct normalized answer of ``run`` (ranks up to the collection's L')
    that is not yet a string of its question to the pool, unjudged (source ``pool``).
    Returns the number of strings added; writes one JudgmentEvent."""
    collection = run.collection
    answers = (RunAnswer.objects.filter(run=run, rank__lte=collection.max_output_size)
               .order_by("question_id", "rank").values_list("question_id", "key", "text"))
    rows = list(answers)
    qids = {q for q, _, _ in rows}
    existing = set(AnswerString.objects.filter(question_id__in=qids)
                   .values_list("question_id", "key"))
    new: dict[tuple[int, str], AnswerString] = {}
    for qid, key, text in rows:
        if not key or (qid, key) in existing or (qid, key) in new:
            continue
        new[(qid, key)] = AnswerString(question_id=qid, text=text.strip(), key=key,
                                       source=Source.POOL)
    AnswerString.objects.bulk_create(new.values(), ignore_conflicts=True, batch_size=2000)
    touched = sorted({q for q, _ in new})
    if touched:
        Question.objects.filter(pk__in=touched).update(version=F("version") + 1)
        collection_judgments_changed(collection_id=collection.pk)
    JudgmentEvent.objects.create(
        collection=collection, question=None, user=by, action="pool_run",
        after={"run": run.pk, "run_name": run.name, "added": len(new),
               "questions": len(touched)})
    return len(new)
