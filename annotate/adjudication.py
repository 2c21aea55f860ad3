"""Gold written from independent layers (DESIGN.md section 9): the strings every layer
agrees on (``question_layers_to_gold``) and the adjudicator's choices for the others.  All
go through ``edits.Edit``, so they are audited and undone by ``judging.question_undo`` like
any judging operation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import (
    Exists,
    OuterRef,
)

from evaluation.metrics.agreement import (
    Mark,
    judged_alike,
    synset_mates,
)

from .edits import Conflict, Edit
from .judging import string_judge
from .layer_selectors import layer_marks, level_values
from .layer_state import LAYERS_DONE, open_layers, question_layer_state
from .models import (
    AnswerString,
    AnswerSynset,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    LayerState,
    Question,
    QuestionStatus,
)

if TYPE_CHECKING:
    from .edits import AnyUser, LevelRef


SHORT_OF_LAYERS = (
    "This question has fewer layers than its request asked for (an assessor left with "
    "theirs open): it waits for a new layer, which asking for layers again tops up; "
    "nothing was changed."
)


# -- agreement to gold ------------------------------------------------------------------------
@transaction.atomic
def question_layers_to_gold(
    *, question: Question | int, by: AnyUser | None
) -> JudgmentEvent | None:
    """Write to gold every string on which all the question's layers agree (all judged it
    incorrect, or all put it at one level with the same synset-mates) and that gold has not
    judged yet; the others stay unjudged in gold: the adjudication queue.  Agreed synsets
    join the gold synset that already holds one of their strings, or a new one.  A
    question left with nothing unjudged is marked done.  One ``layers_agree`` event
    (undone by ``question_undo``); None when nothing was written."""
    op = Edit(question=question, by=by, version=None, action="layers_agree")
    q = op.question
    state = question_layer_state(q)
    if state == LayerState.SHORT:
        raise Conflict(SHORT_OF_LAYERS)
    if state not in LAYERS_DONE:
        raise Conflict("Every layer of this question must be done first.")
    layers = list(JudgingLayer.objects.filter(question=q))
    values = level_values(q.collection_id)
    by_level = {v: pk for pk, v in values.items()}
    marks = layer_marks(layers, values)
    agreed = judged_alike([marks[la.pk] for la in layers])
    first = marks[layers[0].pk]
    mates = synset_mates(first)
    strings = {s.pk: s for s in AnswerString.objects.filter(question=q)}
    gold_of: dict[frozenset, object] = {}
    written = 0
    for pk, s in strings.items():
        if s.judged_at is not None or pk not in agreed:
            continue
        op.touch(s)
        if not first[pk].correct:
            op.place(s, None, None)
        else:
            target = gold_of.get(mates[pk]) or _agreed_target(op, mates[pk], strings)
            gold_of[mates[pk]] = target
            op.place(s, target, op.level(by_level[first[pk].value]))
        written += 1
    LayerRequest.objects.filter(question=q).update(gold_at=op.now)
    if not written:
        return None
    left = [s for s in strings.values() if s.judged_at is None]
    if not left:
        q.status = QuestionStatus.DONE
    op.detail = {"agreed": written, "disagreed": len(left)}
    return op.finish()


def _agreed_target(op: Edit, mates: frozenset, strings: dict[int, AnswerString]) -> AnswerSynset:
    """The gold synset of an agreed synset (its strings ``mates``): the one that already
    holds most of them, or a new one."""
    held = Counter(
        strings[m].synset_id for m in mates if m in strings and strings[m].synset_id is not None
    )
    return op.synset(held.most_common(1)[0][0]) if held else op.new_synset()


def _gold_target(
    op: Edit, layer_marks_: dict[int, Mark], group: int | None, strings: dict[int, AnswerString]
) -> AnswerSynset | None:
    """The gold synset that already holds most strings of the layer's synset ``group``."""
    held = Counter(
        strings[pk].synset_id
        for pk, m in layer_marks_.items()
        if m.group == group and pk in strings and strings[pk].synset_id is not None
    )
    return op.synset(held.most_common(1)[0][0]) if held else None


@transaction.atomic
def adjudicate_take(
    *,
    question: Question | int,
    layer: JudgingLayer | int,
    by: AnyUser | None,
    strings: Sequence[int] | None = None,
    group: int | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Resolve in gold as ``layer`` judged: the ``strings`` named, or every string of the
    layer's synset ``group``.  A correct string joins the gold synset that already holds
    most strings of its layer synset (or a new one) at the layer's level; an incorrect one
    is judged incorrect.  Refused while a layer of the question is open.  Undone by
    ``question_undo``."""
    op = Edit(question=question, by=by, version=version, action="adjudicate_take")
    _refuse_until_layers_done(op.question)
    lay = JudgingLayer.objects.filter(pk=getattr(layer, "pk", layer), question=op.question).first()
    if lay is None:
        raise Conflict("That layer is not a layer of this question.")
    values = level_values(op.question.collection_id)
    by_level = {v: pk for pk, v in values.items()}
    marks = layer_marks([lay], values)[lay.pk]
    if group is not None:
        chosen = [pk for pk, m in marks.items() if m.group == int(group)]
    else:
        chosen = [int(pk) for pk in strings or ()]
    if not chosen or any(pk not in marks for pk in chosen):
        raise Conflict("That layer has not judged those strings.")
    current = {s.pk: s for s in AnswerString.objects.filter(question=op.question)}
    targets: dict = {}
    for pk in chosen:
        s = op.string(pk)
        m = marks[pk]
        if not m.correct:
            op.place(s, None, None)
            continue
        target = targets.get(m.group)
        if target is None:
            held = _gold_target(op, marks, m.group, current)
            target = held if held is not None else op.new_synset()
            targets[m.group] = target
        op.place(s, target, op.level(by_level[m.value]))
    op.detail = {"layer": lay.pk, "assessor": lay.assessor.get_username(), "n_strings": len(chosen)}
    return op.finish()


def unjudged_by_layers(question: Question | int) -> set[int]:
    """The ids of ``question``'s strings that no layer of it judged (pooled after the
    layers were done): the adjudicator places them in gold (``adjudicate_place``)."""
    pk = question.pk if isinstance(question, Question) else question
    return set(
        AnswerString.objects.filter(question_id=pk)
        .exclude(Exists(LayerJudgment.objects.filter(string=OuterRef("pk"))))
        .values_list("pk", flat=True)
    )


@transaction.atomic
def adjudicate_place(
    *,
    question: Question | int,
    string: int,
    by: AnyUser | None,
    synset: int | None = None,
    new_synset: bool = False,
    level: LevelRef = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Put ``string``, one that no layer of the question judged (it was pooled after the
    layers were done), into the gold synset ``synset`` (its id) or a new one, at ``level``
    (None: its gold level if it has one, else the highest), as ``judging.string_judge``
    does -- audited and undone by ``question_undo`` like it.  Refused while a layer is
    open, and for a string a layer judged (take it from the layer)."""
    pk = question.pk if isinstance(question, Question) else question
    _refuse_until_layers_done(pk)
    s = AnswerString.objects.filter(pk=int(string), question_id=pk).first()
    if s is None:
        raise Conflict("That answer string no longer exists.")
    if s.pk not in unjudged_by_layers(pk):
        raise Conflict(f"“{s.text}” was judged in a layer: take it from that layer.")
    if synset is None and not new_synset:
        raise Conflict("Choose a gold synset, or a new one.")
    return string_judge(
        question=pk,
        string=s.pk,
        by=by,
        synset=None if new_synset else int(synset),
        new_synset=new_synset,
        level=level,
        version=version,
    )


def _refuse_until_layers_done(question: Question | int) -> None:
    """Adjudication waits for every layer of the request's k (``LayerState``): gold written
    before then would never be checked against the layers (``question_layers_to_gold``
    leaves judged strings alone), the page would show a layer its assessor is still
    judging, and one assessor's layer alone (when another left with theirs open) is no
    independent judgment: the question waits for a new layer."""
    state = question_layer_state(question)
    if state == LayerState.OPEN:
        n = open_layers(question)
        raise Conflict(
            f"Waiting for {n} layer{'s' if n != 1 else ''}: this question is adjudicated "
            "once every layer of it is done; nothing was changed."
        )
    if state == LayerState.SHORT:
        raise Conflict(SHORT_OF_LAYERS)


def adjudication_lock(*, question: Question | int, version: int | str | None) -> None:
    """Lock ``question``'s row for an adjudication (inside the caller's transaction) and
    refuse it until its k layers are done (``_refuse_until_layers_done``) or when
    ``version`` -- the question's version the adjudication page showed -- is no longer
    the question's: another adjudicator (or a judge of gold) changed it since, and the
    page's choice may overwrite theirs.  No version: not checked (as the judging
    writes)."""
    pk = question.pk if isinstance(question, Question) else question
    current = (
        Question.objects.select_for_update(of=("self",), no_key=True)
        .values_list("version", flat=True)
        .get(pk=pk)
    )
    _refuse_until_layers_done(pk)
    if version is None:
        return
    try:
        stale = int(version) != current
    except (TypeError, ValueError):
        stale = True
    if stale:
        raise Conflict(
            "Someone else changed this question's gold since your page was loaded; "
            "nothing was changed. The page now shows their changes: choose again."
        )
