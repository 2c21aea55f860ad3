"""Writes of independent layers (DESIGN.md section 9): layers requested, an assessor's
judgments in their own layer, a layer marked done (the last one sends the question's
agreement to gold, ``adjudication.question_layers_to_gold``), a layer's undo.

Writes follow ``annotate.edits`` (keyword-only, one transaction, one ``JudgmentEvent``).  A
layer's events carry ``layer`` and are undone by ``layer_undo``; the gold's undo never sees
them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from .adjudication import question_layers_to_gold
from .edits import Conflict, questions_lock
from .layer_state import layer_sealed, layers_complete, sealed_questions
from .models import (
    JUDGE_ROLES,
    AnswerString,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    Level,
    Membership,
    Question,
    state_token,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from .edits import AnyUser, LevelRef


def _user(by: AnyUser | None) -> AbstractBaseUser | None:
    return by if by is not None and by.is_authenticated else None


# -- requests ---------------------------------------------------------------------------------
# a layer request reports its progress every this many questions
PROGRESS_EVERY = 100


@dataclass
class LayersRequested:
    questions: int = 0
    layers: int = 0
    qids: list[str] = field(default_factory=list)
    # left out: gold was already derived from their layers (``sealed_questions``)
    refused: list[str] = field(default_factory=list)
    # left out: they have layers already (a second request would give them more than k)
    layered: list[str] = field(default_factory=list)


def _some(qids: Sequence[str]) -> str:
    return f"{', '.join(qids[:20])}{', ...' if len(qids) > 20 else ''}"


def _check_people(
    collection: Collection,
    assessors: list[AbstractBaseUser],
    adjudicator: AbstractBaseUser | None,
    k: int,
) -> None:
    """Conflict unless the assessors and the adjudicator judge in ``collection``, ``k`` is at
    least one and the adjudicator is not one of the assessors."""
    judges = set(
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES).values_list(
            "user_id", flat=True
        )
    )
    strangers = [u.get_username() for u in assessors if u.pk not in judges]
    if strangers:
        raise Conflict(f"Not an assessor of this collection: {', '.join(strangers)}.")
    if adjudicator is not None and adjudicator.pk not in judges:
        raise Conflict(f"Not an assessor of this collection: {adjudicator.get_username()}.")
    if k < 1:
        raise Conflict("Ask for at least one independent judgment.")
    if adjudicator is not None and any(u.pk == adjudicator.pk for u in assessors):
        raise Conflict(
            f"{adjudicator.get_username()} cannot both judge the questions in a layer and "
            "adjudicate them (the adjudication page shows every layer): name another "
            "adjudicator, or leave them out of the assessors."
        )


def _check_adjudicator_blind(adjudicator: AbstractBaseUser, questions: list[Question]) -> None:
    """Conflict when ``adjudicator`` judges one of ``questions`` in a layer already."""
    theirs = set(
        JudgingLayer.objects.filter(question__in=questions, assessor=adjudicator).values_list(
            "question_id", flat=True
        )
    )
    if theirs:
        mine = [q.qid for q in questions if q.pk in theirs]
        raise Conflict(
            f"{adjudicator.get_username()} judges {_some(mine)} in a layer of their own, "
            "so cannot adjudicate it: name another adjudicator, or leave "
            f"{'that question' if len(mine) == 1 else 'those questions'} out."
        )


def _to_layer(
    questions: list[Question], assessors: list[AbstractBaseUser], k: int
) -> tuple[list[Question], dict[int, set[int]], LayersRequested]:
    """The questions a request for ``k`` layers gives layers to: without the sealed ones
    (``refused``) and those with ``k`` layers already (``layered``), with the assessors of
    the layers each has (``existing``).  Conflict when a question short of ``k`` cannot be
    topped up by ``assessors``, or when no question is left."""
    # a question whose gold was derived from its layers keeps them as they are: a new layer
    # would not change its gold (``question_layers_to_gold`` leaves judged strings alone)
    sealed = sealed_questions(questions)
    refused = [q.qid for q in questions if q.pk in sealed]
    questions = [q for q in questions if q.pk not in sealed]
    # a question with k layers keeps them as they are: more (from another set of
    # assessors) would give it more layers than the request's k; one with fewer is topped up
    existing: dict[int, set[int]] = {}
    for question_id, user_id in JudgingLayer.objects.filter(question__in=questions).values_list(
        "question_id", "assessor_id"
    ):
        existing.setdefault(question_id, set()).add(user_id)
    layered = [q.qid for q in questions if len(existing.get(q.pk, ())) >= k]
    questions = [q for q in questions if len(existing.get(q.pk, ())) < k]
    short = [
        q.qid
        for q in questions
        if k - len(existing.get(q.pk, ()))
        > sum(u.pk not in existing.get(q.pk, ()) for u in assessors)
    ]
    if short and len(assessors) < k:
        raise Conflict(f"{k} independent judgments need at least {k} assessors.")
    if short:  # topped-up questions whose layers are by the assessors chosen
        raise Conflict(
            f"{k} independent judgments need at least {k} assessors without a layer on "
            f"the question ({_some(short)}): choose more assessors."
        )
    if not questions:
        if not layered:
            raise Conflict(
                "Gold was already derived from the layers of every question chosen "
                f"({_some(refused)}): no layer was requested."
            )
        why = f"{_some(layered)} already {'has' if len(layered) == 1 else 'have'} layers"
        if refused:
            why += f"; gold was already derived from the layers of {_some(refused)}"
        raise Conflict(f"No layer was requested: {why}.")
    return questions, existing, LayersRequested(refused=refused, layered=layered)


@transaction.atomic
def layers_request(
    *,
    collection: Collection,
    questions: Sequence[Question],
    assessors: Iterable[AbstractBaseUser],
    by: AnyUser | None,
    k: int = 2,
    sample: int | None = None,
    seed: int = 0,
    adjudicator: AbstractBaseUser | None = None,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> LayersRequested:
    """Ask for ``k`` independent judgments of ``questions`` (all of them, or a seeded
    random ``sample`` of that many, for an agreement study): each question gets ``k`` of
    ``assessors`` in turn, a layer each, and is assigned to them.  Left out, before
    sampling: the questions whose gold was already derived from their layers
    (``sealed_questions``, listed in ``refused``) and those that have ``k`` layers or more
    already (``layered``: their layers stay as they are); a question with fewer (an
    assessor left the collection with their layer open) is topped up to ``k`` by assessors
    who have no layer on it.  Conflict when none is left.  ``adjudicator`` (an assessor or
    organizer) resolves disagreements besides the organizers; never one of the question's
    assessors (blindness: the adjudication page shows every layer), so Conflict when they
    are among ``assessors`` or judge one of ``questions`` in a layer already.
    ``progress(done, total, unit)`` hears the questions given their layers (a job's bar)."""
    assessors = list(assessors)
    _check_people(collection, assessors, adjudicator, k)
    questions = sorted(
        (q for q in questions if q.collection_id == collection.pk), key=lambda q: q.pk
    )
    # the questions' rows first, as the judging writes lock them, in id order (two requests
    # sharing questions never deadlock): a second request for them waits until the first
    # committed and then reads its layers, as if it came after (red team: two requests at
    # once with different assessors gave every question 2k layers)
    questions_lock(q.pk for q in questions)
    if adjudicator is not None:
        _check_adjudicator_blind(adjudicator, questions)
    questions, existing, result = _to_layer(questions, assessors, k)
    if sample is not None:
        if sample < 1:
            raise Conflict("A sample needs at least one question.")
        questions = sorted(
            random.Random(seed).sample(questions, min(sample, len(questions))), key=lambda q: q.pk
        )
    result.questions, result.qids = len(questions), [q.qid for q in questions]
    through = Question.assessors.through
    links, layers, requests = [], [], []
    for i, q in enumerate(questions):
        if progress is not None and i % PROGRESS_EVERY == 0:
            progress(i, len(questions), "questions")
        have = existing.get(q.pk, set())
        turn = [assessors[(i * k + j) % len(assessors)] for j in range(len(assessors))]
        chosen = [u for u in turn if u.pk not in have][: k - len(have)]
        requests.append(
            LayerRequest(question=q, k=k, adjudicator=adjudicator, requested_by=_user(by))
        )
        links += [through(question_id=q.pk, user_id=u.pk) for u in chosen]
        layers += [JudgingLayer(question=q, assessor=u) for u in chosen]
    # one statement, not two queries a question: a question's earlier request (a layer
    # request topped up) takes the new k, adjudicator and requester
    LayerRequest.objects.bulk_create(
        requests,
        update_conflicts=True,
        unique_fields=["question"],
        update_fields=["k", "adjudicator", "requested_by"],
        batch_size=2000,
    )
    through.objects.bulk_create(links, ignore_conflicts=True)
    before = JudgingLayer.objects.filter(question__in=questions).count()
    JudgingLayer.objects.bulk_create(layers, ignore_conflicts=True)
    result.layers = JudgingLayer.objects.filter(question__in=questions).count() - before
    if progress is not None:
        progress(len(questions), len(questions), "questions")
    JudgmentEvent.objects.create(
        collection=collection,
        user=_user(by),
        action="layers_request",
        after={
            "questions": result.qids[:1000],
            "k": k,
            "sample": sample,
            "seed": seed,
            "assessors": [u.get_username() for u in assessors],
            "adjudicator": adjudicator.get_username() if adjudicator else None,
            "refused": result.refused[:1000],
            "layered": result.layered[:1000],
        },
    )
    return result


# -- judging inside a layer -----------------------------------------------------------------
def layer_token(j: LayerJudgment | None) -> str:
    """A string's state in a layer as the judging page shows it (``state_token``: ``u``
    unjudged, ``x`` incorrect, ``<synset number>/<level id>``); sent back as ``expect``."""
    if j is None:
        return state_token(None, None, False)
    return state_token(j.group, j.level_id, True)


def _row_snap(j: LayerJudgment | None) -> list | None:
    if j is None:
        return None
    return [j.group, j.level_id, j.judged_at.isoformat()]


class _LayerEdit:
    """One operation on one layer: locks it, checks it is its assessor's and not done,
    remembers the rows it touches, bumps the version and writes the event."""

    def __init__(
        self,
        *,
        layer: JudgingLayer | int,
        by,
        action: str,
        version: int | None = None,
        done_ok: bool = False,
    ):
        pk = layer.pk if isinstance(layer, JudgingLayer) else layer
        self.layer = (
            JudgingLayer.objects.select_for_update(of=("self",))
            .select_related("question")
            .get(pk=pk)
        )
        self.by = _user(by)
        if self.by is None or self.by.pk != self.layer.assessor_id:
            raise Conflict("Only its assessor judges in a layer.")
        if self.layer.done and not done_ok:
            raise Conflict("This layer is marked done; reopen it to change it.")
        if version is not None and int(version) != self.layer.version:
            # the layer is its assessor's alone: any change since the page was rendered
            # (another tab, a key replayed) may have renumbered the synsets it shows
            raise Conflict(
                "Your layer was changed since your page was loaded (in another tab or "
                "window?); your edit was not applied."
            )
        self.action = action
        self.now = timezone.now()
        self.rows = {j.string_id: j for j in self.layer.judgments.all()}
        self.before: dict[int, list | None] = {}
        self.detail: dict = {}

    def string(self, pk, expect: str | None = None) -> AnswerString:
        """The string ``pk`` of the question; with ``expect`` (its token in this layer as
        the page showed it, ``layer_token``) a string judged otherwise since is refused."""
        try:
            s = AnswerString.objects.get(pk=int(pk), question_id=self.layer.question_id)
        except (AnswerString.DoesNotExist, ValueError, TypeError):
            raise Conflict("That answer string no longer exists.") from None
        if expect is not None and expect != layer_token(self.rows.get(s.pk)):
            raise Conflict(
                f"“{s.text}” was changed in your layer since your page was loaded; "
                "your edit was not applied."
            )
        return s

    def level(self, level) -> Level:
        levels = list(Level.objects.filter(collection_id=self.layer.question.collection_id))
        if level is None:
            return min(levels, key=lambda lv: lv.order)
        for lv in levels:
            if lv == level or str(lv.pk) == str(level) or lv.code == level:
                return lv
        raise Conflict(f"Unknown level {level!r}.")

    def new_group(self) -> int:
        return max([j.group or 0 for j in self.rows.values()] + [0]) + 1

    def put(self, string_id: int, group: int | None, level: Level | None) -> None:
        j = self.rows.get(string_id)
        self.before.setdefault(string_id, _row_snap(j))
        if j is None:
            j = LayerJudgment(layer=self.layer, string_id=string_id)
            self.rows[string_id] = j
        j.group, j.level, j.judged_at = group, level if group is not None else None, self.now
        j.save()

    def drop(self, string_id: int) -> None:
        j = self.rows.pop(string_id, None)
        self.before.setdefault(string_id, _row_snap(j))
        if j is not None:
            j.delete()

    def finish(self) -> JudgmentEvent:
        layer = self.layer
        # renumber the groups 1..n (keeping their order), as gold renumbers its synsets
        groups = sorted({j.group for j in self.rows.values() if j.group is not None})
        renumber = {g: i for i, g in enumerate(groups, start=1)}
        for j in self.rows.values():
            if j.group is not None and renumber[j.group] != j.group:
                self.before.setdefault(j.string_id, _row_snap(j))
                j.group = renumber[j.group]
                j.save(update_fields=["group"])
        layer.version += 1
        if layer.started_at is None:
            layer.started_at = self.now
        layer.save(update_fields=["version", "started_at", "done_at", "seconds"])
        after = {str(pk): _row_snap(self.rows.get(pk)) for pk in self.before}
        return JudgmentEvent.objects.create(
            collection_id=layer.question.collection_id,
            question_id=layer.question_id,
            layer=layer,
            user=self.by,
            action=self.action,
            before={
                "rows": {str(k): v for k, v in self.before.items()},
                "done_at": self.detail.pop("done_before", None),
            },
            after={"rows": after, **self.detail},
        )


@transaction.atomic
def layer_judge(
    *,
    layer: JudgingLayer | int,
    string: int,
    by: AnyUser | None,
    group: int | None = None,
    new_group: bool = False,
    level: LevelRef = None,
    version: int | None = None,
    expect: str | None = None,
) -> JudgmentEvent:
    """Judge ``string`` in the assessor's layer: into synset ``group`` (a number of this
    layer) or a new one, with ``level`` (the highest when None); incorrect when neither.
    ``expect``: the string's ``layer_token`` as the page showed it."""
    op = _LayerEdit(
        layer=layer,
        by=by,
        version=version,
        action="layer_new_synset"
        if new_group
        else "layer_add"
        if group is not None
        else "layer_incorrect",
    )
    s = op.string(string, expect)
    if new_group:
        op.put(s.pk, op.new_group(), op.level(level))
    elif group is not None:
        if not any(j.group == int(group) for j in op.rows.values()):
            raise Conflict(f"There is no synset {group} in your layer.")
        current = op.rows.get(s.pk)
        keep = current.level_id if current is not None and current.group else None
        op.put(s.pk, int(group), op.level(level if level is not None else keep))
    else:
        op.put(s.pk, None, None)
    op.detail = {"text": s.text}
    return op.finish()


@transaction.atomic
def layer_set_level(
    *,
    layer: JudgingLayer | int,
    string: int,
    level: LevelRef,
    by: AnyUser | None,
    version: int | None = None,
    expect: str | None = None,
) -> JudgmentEvent:
    op = _LayerEdit(layer=layer, by=by, version=version, action="layer_level")
    s = op.string(string, expect)
    j = op.rows.get(s.pk)
    if j is None or j.group is None:
        raise Conflict(f"“{s.text}” is not in a synset of your layer, so it has no level.")
    op.put(s.pk, j.group, op.level(level))
    op.detail = {"text": s.text}
    return op.finish()


@transaction.atomic
def layer_unjudge(
    *,
    layer: JudgingLayer | int,
    string: int,
    by: AnyUser | None,
    version: int | None = None,
    expect: str | None = None,
) -> JudgmentEvent:
    op = _LayerEdit(layer=layer, by=by, version=version, action="layer_unjudge")
    s = op.string(string, expect)
    op.drop(s.pk)
    op.detail = {"text": s.text}
    return op.finish()


@transaction.atomic
def layer_merge(
    *,
    layer: JudgingLayer | int,
    groups: Sequence[int],
    by: AnyUser | None,
    version: int | None = None,
) -> JudgmentEvent:
    """Merge synsets ``groups[1:]`` of the layer into ``groups[0]``; levels are kept."""
    op = _LayerEdit(layer=layer, by=by, version=version, action="layer_merge")
    groups = [int(g) for g in groups]
    present = {j.group for j in op.rows.values()}
    if len(set(groups)) < 2 or not set(groups) <= present:
        raise Conflict("Choose at least two synsets of your layer to merge.")
    for j in list(op.rows.values()):
        if j.group in groups[1:]:
            op.put(j.string_id, groups[0], j.level)
    op.detail = {"into": groups[0], "merged": groups[1:]}
    return op.finish()


@transaction.atomic
def layer_split(
    *,
    layer: JudgingLayer | int,
    strings: Sequence[int],
    by: AnyUser | None,
    version: int | None = None,
) -> JudgmentEvent:
    """Move ``strings`` (all in synsets of the layer) out into one new synset of the
    layer; levels are kept (as ``judging.synset_split`` does in gold)."""
    op = _LayerEdit(layer=layer, by=by, version=version, action="layer_split")
    picked = [op.string(pk) for pk in strings]
    rows = [op.rows.get(s.pk) for s in picked]
    if not picked or any(j is None or j.group is None for j in rows):
        raise Conflict("Only strings in a synset of your layer can be split out.")
    group = op.new_group()
    for j in rows:
        op.put(j.string_id, group, j.level)
    op.detail = {"texts": [s.text for s in picked], "into": group}
    return op.finish()


@transaction.atomic
def layer_mark_done(
    *, layer: JudgingLayer | int, by: AnyUser | None, done: bool = True
) -> JudgmentEvent:
    """Mark the layer done (every string of the question judged in it) or reopen it.  When
    the last of the question's layers is done, the strings they agree on go to gold
    (``question_layers_to_gold``)."""
    # the question first (the order every layer and gold operation locks in): two
    # assessors marking the question's last two layers done at once are serialized, so
    # the second sees the first done and runs the agreement step
    question_id = JudgingLayer.objects.values_list("question_id", flat=True).get(
        pk=getattr(layer, "pk", layer)
    )
    list(Question.objects.select_for_update(no_key=True).filter(pk=question_id).values("pk"))
    op = _LayerEdit(
        layer=layer, by=by, action="layer_done" if done else "layer_reopen", done_ok=True
    )
    if not done and op.layer.done and layer_sealed(op.layer):
        raise Conflict(
            "Every layer of this question is done and its gold was derived from them: "
            "your layer can no longer be reopened (the other layers were shown to you)."
        )
    if done:
        missing = (
            AnswerString.objects.filter(question_id=op.layer.question_id)
            .exclude(pk__in=list(op.rows))
            .count()
        )
        if missing:
            raise Conflict(
                f"Judge every candidate before marking your layer done ({missing} left)."
            )
    op.detail["done_before"] = op.layer.done_at.isoformat() if op.layer.done_at else None
    op.layer.done_at = op.now if done else None
    started = op.layer.started_at or op.now
    op.layer.seconds = (op.now - started).total_seconds() if done else None
    event = op.finish()
    if done and layers_complete(op.layer.question_id):
        question_layers_to_gold(question=op.layer.question_id, by=by)
    return event


@transaction.atomic
def layer_undo(*, layer: JudgingLayer | int, by: AnyUser | None) -> JudgmentEvent:
    """Undo the latest change of the layer (its assessor's only), restoring the rows its
    event names.  Refused when the layer is done, or when those rows changed since."""
    op = _LayerEdit(layer=layer, by=by, action="layer_undo")
    undone: set[int] = set()
    target = None
    for e in op.layer.events.order_by("-id")[:500]:
        if e.action == "layer_undo":
            undone.add(e.after.get("undoes"))
        elif e.pk not in undone and e.action not in ("layer_done", "layer_reopen"):
            target = e
            break
    if target is None:
        raise Conflict("Nothing to undo in your layer.")
    try:
        before = {int(k): v for k, v in target.before["rows"].items()}
        after = {int(k): v for k, v in target.after["rows"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise Conflict("The record of that action cannot be read; it cannot be undone.") from None
    for pk, snap in after.items():
        now = _row_snap(op.rows.get(pk))
        if (now is None) != (snap is None) or (now is not None and now[:2] != list(snap[:2])):
            raise Conflict("Your layer changed since that action; it cannot be undone.")
    levels = {
        lv.pk: lv for lv in Level.objects.filter(collection_id=op.layer.question.collection_id)
    }
    strings = set(
        AnswerString.objects.filter(
            question_id=op.layer.question_id, pk__in=list(before)
        ).values_list("pk", flat=True)
    )
    for pk, snap in before.items():
        if snap is None or pk not in strings:
            op.drop(pk)
            continue
        group, level_id, _ = snap
        op.put(pk, group, levels.get(level_id) if group is not None else None)
    op.detail = {"undoes": target.pk, "undone_action": target.action}
    return op.finish()
