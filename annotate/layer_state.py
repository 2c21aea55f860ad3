"""Where a question judged in independent layers stands (DESIGN.md section 9), for one
question or a few: its ``LayerState`` (defined once, ``QuestionQuerySet.with_layer_state``,
and aware of the request's k), whether its layers are complete or sealed.  Reads, shared
by the layer writes, adjudication and the pages.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q

from .models import JudgingLayer, LayerState, Question

# every one of the request's k layers (or more) is done: the agreement step has run, or runs
LAYERS_DONE = (LayerState.WAITING, LayerState.COMPLETE)


def question_layer_state(question: Question | int) -> str:
    """The ``LayerState`` of ``question`` (one query)."""
    pk = question.pk if isinstance(question, Question) else question
    return (
        Question.objects.filter(pk=pk)
        .with_layer_state()
        .values_list("layer_state", flat=True)
        .get()
    )


def layers_complete(question_id: int) -> bool:
    """Whether the question's layers are all done and at least as many as its request's k
    (fewer, after an assessor left with their layer open, wait for another layer): then
    the agreement step (``question_layers_to_gold``) runs.  One query."""
    return question_layer_state(question_id) in LAYERS_DONE


def sealed_questions(questions: Sequence[Question | int]) -> set[int]:
    """The ids among ``questions`` whose layers are sealed: gold was derived from them
    (``LayerRequest.gold_at``) or all of the request's ``k`` layers (or more) are done --
    their assessors may have seen one another's layers, and gold holds their agreement.
    Such a layer is never reopened, replaced or joined by another one (gold would keep the
    old agreement).  Fewer than ``k`` layers, all done (an assessor left with theirs
    open), wait for another layer.  One query."""
    ids = [q.pk if isinstance(q, Question) else int(q) for q in questions]
    if not ids:
        return set()
    return set(
        Question.objects.filter(pk__in=ids)
        .with_layer_state()
        .filter(Q(layer_request__gold_at__isnull=False) | Q(layer_state__in=LAYERS_DONE))
        .values_list("pk", flat=True)
    )


def layer_sealed(layer: JudgingLayer) -> bool:
    """Whether ``layer``'s question is sealed (``sealed_questions``): its assessor may have
    seen the other layers, so the layer can no longer be reopened (DESIGN.md section 9:
    blind until every layer is done, and no copying afterwards).  One query."""
    return bool(sealed_questions([layer.question_id]))


def open_layers(question: Question | int) -> int:
    """How many layers of ``question`` are not done yet (one query)."""
    pk = question.pk if isinstance(question, Question) else question
    return JudgingLayer.objects.filter(question_id=pk, done_at__isnull=True).count()
