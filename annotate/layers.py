"""Several assessors per question (DESIGN.md section 9): independent layers, agreement to
gold, adjudication.

Writes follow services.py (keyword-only, one transaction, one ``JudgmentEvent``).  A
layer's events carry ``layer`` and are undone by ``layer_undo``; the gold's undo never
sees them.  Adjudication writes gold through ``services._Edit``, so it is audited and
undone by ``question_undo`` like any judging operation.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from django.db import transaction
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from evaluation.metrics.agreement import (
    Mark,
    PairAgreement,
    QuestionFigures,
    alpha_nominal,
    alpha_ordinal,
    group_sizes,
    judged_alike,
    pair_agreement_arrays,
    question_figures,
    question_figures_two,
    synset_mates,
)

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
    QuestionQuerySet,
    QuestionStatus,
    Role,
    state_token,
)
from .selectors import run_frequencies
from .services import Conflict, _Edit, string_judge

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from .services import AnyUser, LevelRef


def _user(by):
    return by if by is not None and by.is_authenticated else None


# -- requests ---------------------------------------------------------------------------------
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
    are among ``assessors`` or judge one of ``questions`` in a layer already."""
    assessors = list(assessors)
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
    questions = sorted(
        (q for q in questions if q.collection_id == collection.pk), key=lambda q: q.pk
    )
    if adjudicator is not None:
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
    if sample is not None:
        if sample < 1:
            raise Conflict("A sample needs at least one question.")
        questions = sorted(
            random.Random(seed).sample(questions, min(sample, len(questions))), key=lambda q: q.pk
        )
    result = LayersRequested(
        questions=len(questions), qids=[q.qid for q in questions], refused=refused, layered=layered
    )
    through = Question.assessors.through
    links, layers = [], []
    for i, q in enumerate(questions):
        have = existing.get(q.pk, set())
        turn = [assessors[(i * k + j) % len(assessors)] for j in range(len(assessors))]
        chosen = [u for u in turn if u.pk not in have][: k - len(have)]
        LayerRequest.objects.update_or_create(
            question=q, defaults={"k": k, "adjudicator": adjudicator, "requested_by": _user(by)}
        )
        links += [through(question_id=q.pk, user_id=u.pk) for u in chosen]
        layers += [JudgingLayer(question=q, assessor=u) for u in chosen]
    through.objects.bulk_create(links, ignore_conflicts=True)
    before = JudgingLayer.objects.filter(question__in=questions).count()
    JudgingLayer.objects.bulk_create(layers, ignore_conflicts=True)
    result.layers = JudgingLayer.objects.filter(question__in=questions).count() - before
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
            "refused": refused[:1000],
            "layered": layered[:1000],
        },
    )
    return result


def layer_for(*, question: Question | int, user: AnyUser) -> JudgingLayer | None:
    """The layer ``user`` judges ``question`` in, or None (the question is judged in gold
    directly by them, as before)."""
    pk = question.pk if isinstance(question, Question) else question
    return JudgingLayer.objects.filter(question_id=pk, assessor=user).first()


# -- judging inside a layer -----------------------------------------------------------------
def layer_token(j: LayerJudgment | None) -> str:
    """A string's state in a layer as the judging page shows it (``state_token``: ``u``
    unjudged, ``x`` incorrect, ``<synset number>/<level id>``); sent back as ``expect``."""
    if j is None:
        return state_token(None, None, False)
    return state_token(j.group, j.level_id, True)


def _row_snap(j: LayerJudgment | None):
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
    layer; levels are kept (as ``services.synset_split`` does in gold)."""
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


def layers_complete(question_id: int) -> bool:
    """Whether the question's layers are all done and at least as many as its request's k
    (fewer, after an assessor left with their layer open, wait for another layer): then
    the agreement step (``question_layers_to_gold``) runs.  Two queries."""
    layers = JudgingLayer.objects.filter(question_id=question_id)
    wanted = LayerRequest.objects.filter(question_id=question_id).values_list("k", flat=True)
    k = wanted.first() or 1
    return layers.count() >= k and not layers.filter(done_at__isnull=True).exists()


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
    layer = JudgingLayer.objects.filter(question=OuterRef("pk"))
    n_layers = layer.values("question").annotate(n=Count("pk")).values("n")
    return set(
        Question.objects.filter(pk__in=ids)
        .annotate(n_layers=Subquery(n_layers))
        .filter(
            Q(layer_request__gold_at__isnull=False)
            | (Q(n_layers__gte=F("layer_request__k")) & ~Exists(layer.filter(done_at__isnull=True)))
        )
        .values_list("pk", flat=True)
    )


def layer_sealed(layer: JudgingLayer) -> bool:
    """Whether ``layer``'s question is sealed (``sealed_questions``): its assessor may have
    seen the other layers, so the layer can no longer be reopened (DESIGN.md section 9:
    blind until every layer is done, and no copying afterwards).  One query."""
    return bool(sealed_questions([layer.question_id]))


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


# -- reads ------------------------------------------------------------------------------------
def level_values(collection_id: int) -> dict[int, int]:
    """level id -> its ordinal value for agreement (the lowest level 1, higher is better;
    incorrect is 0)."""
    levels = list(Level.objects.filter(collection_id=collection_id).order_by("-order"))
    return {lv.pk: i for i, lv in enumerate(levels, start=1)}


def layer_marks(
    layers: Sequence[JudgingLayer], values: dict[int, int]
) -> dict[int, dict[int, Mark]]:
    """layer id -> string id -> Mark, for ``layers`` (one query)."""
    out: dict[int, dict[int, Mark]] = {la.pk: {} for la in layers}
    for layer_id, string_id, group, level_id in LayerJudgment.objects.filter(
        layer__in=[la.pk for la in layers]
    ).values_list("layer_id", "string_id", "group", "level_id"):
        out[layer_id][string_id] = Mark(group, values.get(level_id, 0) if group else 0)
    return out


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
    op = _Edit(question=question, by=by, version=None, action="layers_agree")
    q = op.question
    layers = list(JudgingLayer.objects.filter(question=q))
    if not layers or any(not la.done for la in layers):
        raise Conflict("Every layer of this question must be done first.")
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
            key = mates[pk]
            target = gold_of.get(key)
            if target is None:
                held = Counter(
                    strings[m].synset_id
                    for m in key
                    if m in strings and strings[m].synset_id is not None
                )
                target = op.synset(held.most_common(1)[0][0]) if held else op.new_synset()
                gold_of[key] = target
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


def _gold_target(op: _Edit, layer_marks_: dict[int, Mark], group, strings) -> object | None:
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
    op = _Edit(question=question, by=by, version=version, action="adjudicate_take")
    _refuse_while_open(op.question)
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
    (None: its gold level if it has one, else the highest), as ``services.string_judge``
    does -- audited and undone by ``question_undo`` like it.  Refused while a layer is
    open, and for a string a layer judged (take it from the layer)."""
    pk = question.pk if isinstance(question, Question) else question
    _refuse_while_open(pk)
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


def open_layers(question: Question | int) -> int:
    """How many layers of ``question`` are not done yet (one query)."""
    pk = question.pk if isinstance(question, Question) else question
    return JudgingLayer.objects.filter(question_id=pk, done_at__isnull=True).count()


def _refuse_while_open(question: Question | int) -> None:
    """Adjudication waits for every layer: gold written before then would never be
    checked against the layers (``question_layers_to_gold`` leaves judged strings alone),
    and the page would show a layer its assessor is still judging."""
    n = open_layers(question)
    if n:
        raise Conflict(
            f"Waiting for {n} layer{'s' if n != 1 else ''}: this question is adjudicated "
            "once every layer of it is done; nothing was changed."
        )


def adjudication_lock(*, question: Question | int, version: int | str | None) -> None:
    """Lock ``question``'s row for an adjudication (inside the caller's transaction) and
    refuse it while a layer of the question is open (``_refuse_while_open``) or when
    ``version`` -- the question's version the adjudication page showed -- is no longer
    the question's: another adjudicator (or a judge of gold) changed it since, and the
    page's choice may overwrite theirs.  No version: not checked (as the judging
    services)."""
    pk = question.pk if isinstance(question, Question) else question
    current = (
        Question.objects.select_for_update(of=("self",), no_key=True)
        .values_list("version", flat=True)
        .get(pk=pk)
    )
    _refuse_while_open(pk)
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


# -- reads for the pages ----------------------------------------------------------------------
def adjudication_queue(collection: Collection) -> QuestionQuerySet:
    """Questions of ``collection`` whose layers are all done and whose gold still has
    unjudged strings (the disagreements), by id."""
    return (
        Question.objects.filter(collection=collection, layer_request__isnull=False)
        .annotate(
            open_layers=Count("layers", filter=Q(layers__done_at__isnull=True), distinct=True),
            unjudged=Count("strings", filter=Q(strings__judged_at__isnull=True), distinct=True),
        )
        .filter(open_layers=0, unjudged__gt=0)
        .order_by("id")
    )


def adjudicator_questions(user: AnyUser) -> list[Question]:
    """The questions waiting for ``user``'s adjudication (``awaiting_adjudication``) as the
    adjudicator their layer request names, in collections where they still judge; with
    their collection, the strings left to resolve (``n_unjudged``) and the layers'
    assessors (``layer_assessors``), by collection then id.  Two queries."""
    questions = list(
        Question.objects.awaiting_adjudication()
        .filter(
            layer_request__adjudicator=user,
            collection__memberships__user=user,
            collection__memberships__role__in=JUDGE_ROLES,
        )
        .with_counts()
        .select_related("collection")
        .order_by("collection__name", "id")
    )
    names: dict[int, list[str]] = {q.pk: [] for q in questions}
    for question_id, username in (
        JudgingLayer.objects.filter(question__in=list(names))
        .order_by("question_id", "id")
        .values_list("question_id", "assessor__username")
    ):
        names[question_id].append(username)
    for q in questions:
        q.layer_assessors = names[q.pk]
    return questions


def can_adjudicate(user: AnyUser, question: Question, role: str | None) -> bool:
    """Organizers adjudicate every question; a named adjudicator the questions they were
    named for -- but, when they judge it in a layer too, not before every layer of it is
    done (blindness: the adjudication page shows gold and every layer)."""
    if role == Role.ORGANIZER:
        return True
    named = LayerRequest.objects.filter(question=question, adjudicator_id=user.pk).exists()
    if not named:
        return False
    # one who judges the question in a layer too is blind until every layer is done
    # (``JudgingLayer.objects.readable_by``), not only theirs
    judges_it = JudgingLayer.objects.filter(question=question, assessor_id=user.pk).exists()
    return (
        not judges_it
        or not JudgingLayer.objects.filter(question=question, done_at__isnull=True).exists()
    )


# -- the agreement page -----------------------------------------------------------------------
@dataclass
class PairRow:
    """Pooled agreement of two assessors over the questions both judged (layers done)."""

    a: str
    b: str
    questions: int
    figures: PairAgreement


@dataclass
class QuestionRow:
    pk: int
    qid: str
    assessors: list[str]
    figures: QuestionFigures
    unjudged_in_gold: int


@dataclass
class ThroughputRow:
    assessor: str
    layers: int
    done: int
    strings: int
    median_seconds: float | None


@dataclass
class AgreementReport:
    """Everything the agreement page shows (``collection_agreement``)."""

    requested: int  # questions with a layer request
    complete: int  # of which every layer is done
    overall: PairAgreement | None  # every pair of layers of every complete question
    alpha_nominal: float  # all layers as coders (any k)
    alpha_ordinal: float
    pairs: list[PairRow]
    questions: list[QuestionRow]  # lowest agreement first
    throughput: list[ThroughputRow]
    level_names: list[str]  # value 0..n: incorrect, lowest level, ..., highest
    # questions ``overall`` is over: a string judged by both layers of a pair (as ``pairs``)
    overall_questions: int = 0


def _layer_table(collection: Collection):
    """The collection's layer judgments as arrays (layer id, string id, group or -1,
    value) -- one query, no model instances."""
    values = level_values(collection.pk)
    rows = list(
        LayerJudgment.objects.filter(layer__question__collection=collection).values_list(
            "layer_id", "string_id", Coalesce("group", Value(-1)), Coalesce("level_id", Value(0))
        )
    )
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    table = np.array(rows, dtype=np.int64)
    lookup = np.zeros(max(values, default=0) + 1, dtype=np.int64)
    for pk, v in values.items():
        lookup[pk] = v
    g = table[:, 2]
    return table[:, 0], table[:, 1], g, np.where(g >= 0, lookup[table[:, 3]], 0)


def collection_agreement(collection: Collection) -> AgreementReport:
    """Agreement of the collection's layers (DESIGN.md section 9), per assessor pair,
    pooled, and per question; per-assessor throughput.  A fixed number of queries; the
    figures are computed on arrays (questions with two layers in one vectorized pass,
    others one by one)."""
    values = level_values(collection.pk)
    levels = dict(Level.objects.filter(collection=collection).values_list("pk", "code"))
    level_names = ["incorrect"] + [
        levels[pk] for pk, _ in sorted(values.items(), key=lambda kv: kv[1])
    ]
    # a question's layers by assessor name: pooled pairs put the same assessor first
    # whichever layer was created first (a layers CSV round trip recreates them in name
    # order), as the per-pair rows do
    layers = list(
        JudgingLayer.objects.filter(question__collection=collection)
        .order_by("question_id", "assessor__username")
        .annotate(open=ExpressionWrapper(Q(done_at__isnull=True), output_field=BooleanField()))
        .values_list("pk", "question_id", "assessor__username", "open")
    )
    by_q: dict[int, list[tuple]] = {}
    for row in layers:
        by_q.setdefault(row[1], []).append(row)
    complete = {q: ls for q, ls in by_q.items() if not any(r[3] for r in ls)}
    order = sorted(complete)
    qindex = {q: i for i, q in enumerate(order)}
    L_, S_, G_, V_ = _layer_table(collection)
    judged = Counter(L_.tolist())
    # position of each layer in its question (-1: question not complete), question index
    top = int(max([r[0] for r in layers], default=0)) + 1
    pos_of = np.full(top, -1, dtype=np.int64)
    q_of = np.full(top, -1, dtype=np.int64)
    k_of = np.zeros(max(len(order), 1), dtype=np.int64)
    for q in order:
        for i, r in enumerate(complete[q]):
            pos_of[r[0]], q_of[r[0]] = i, qindex[q]
        k_of[qindex[q]] = len(complete[q])
    names = {qindex[q]: [r[2] for r in complete[q]] for q in order}
    keep = pos_of[L_] >= 0 if len(L_) else np.zeros(0, dtype=bool)
    L_, S_, G_, V_ = L_[keep], S_[keep], G_[keep], V_[keep]
    P_, Q_ = pos_of[L_], q_of[L_]
    info = {
        pk: (qid, n)
        for pk, qid, n in Question.objects.filter(collection=collection, layers__isnull=False)
        .distinct()
        .annotate(n=Count("strings", filter=Q(strings__judged_at__isnull=True), distinct=True))
        .values_list("pk", "qid", "n")
    }
    requested = LayerRequest.objects.filter(question__collection=collection).count()
    # units judged in positions i and j of their question, for every pair of positions
    kmax = int(k_of.max()) if len(order) else 0
    sort = np.lexsort((P_, S_, Q_))
    Q_, S_, P_, G_, V_ = Q_[sort], S_[sort], P_[sort], G_[sort], V_[sort]
    unit_start = (
        np.flatnonzero(np.r_[True, (Q_[1:] != Q_[:-1]) | (S_[1:] != S_[:-1])])
        if len(Q_)
        else np.zeros(0, dtype=np.int64)
    )
    unit_of = (
        np.cumsum(np.r_[False, (Q_[1:] != Q_[:-1]) | (S_[1:] != S_[:-1])])
        if len(Q_)
        else np.zeros(0, dtype=np.int64)
    )
    n_units = len(unit_start)
    grid_g = np.full((max(kmax, 1), n_units), -2, dtype=np.int64)  # -2: not judged
    grid_v = np.zeros((max(kmax, 1), n_units), dtype=np.int64)
    grid_g[P_, unit_of], grid_v[P_, unit_of] = G_, V_
    unit_q = Q_[unit_start] if n_units else np.zeros(0, dtype=np.int64)
    # the size of each string's synset in the whole of each layer (``alike``)
    grid_n = np.vstack([group_sizes(unit_q, grid_g[p]) for p in range(max(kmax, 1))])
    per_pair: dict[tuple[str, str], list[np.ndarray]] = {}
    overall: list[list[np.ndarray]] = [[] for _ in range(7)]
    overall_q: list[np.ndarray] = []
    for i in range(kmax):
        for j in range(i + 1, kmax):
            m = (grid_g[i] > -2) & (grid_g[j] > -2)
            if not m.any():
                continue
            uq = unit_q[m]
            # positions follow the assessors' names: names[qi][i] < names[qi][j]
            cols = (uq, grid_g[i][m], grid_v[i][m], grid_g[j][m], grid_v[j][m])
            sizes = (grid_n[i][m], grid_n[j][m])
            # pooled over the pairs of positions, a question's units of two pairs are
            # distinct units (and its synsets distinct synsets)
            offset = (i * kmax + j) * (len(order) + 1)
            for part, arr in zip(overall, (uq + offset, *cols[1:], *sizes), strict=True):
                part.append(arr)
            overall_q.append(uq)
            # per assessor pair: names of positions i and j of each question
            codes: dict[tuple[str, str], int] = {}
            keys = np.array(
                [codes.setdefault((names[qi][i], names[qi][j]), len(codes)) for qi in uq.tolist()],
                dtype=np.int64,
            )
            for pair, key in codes.items():
                sel = keys == key
                have = per_pair.setdefault(pair, [np.zeros(0, dtype=np.int64)] * 7)
                per_pair[pair] = [
                    np.concatenate([h, c[sel]]) for h, c in zip(have, (*cols, *sizes), strict=True)
                ]
    n_values = len(level_names)
    pairs = [
        PairRow(
            a,
            b,
            len(np.unique(arr[0])),
            pair_agreement_arrays(*arr[:5], size_a=arr[5], size_b=arr[6], n_values=n_values),
        )
        for (a, b), arr in sorted(per_pair.items())
    ]
    if overall[0]:
        arr = [np.concatenate(p) for p in overall]
        overall_fig = pair_agreement_arrays(
            *arr[:5], size_a=arr[5], size_b=arr[6], n_values=n_values
        )
        # the questions with a string judged by both layers of some pair, as the pair rows
        overall_questions = len(np.unique(np.concatenate(overall_q)))
    else:
        overall_fig, overall_questions = None, 0
    if n_units and kmax >= 2:
        a_nom = alpha_nominal(np.where(grid_g > -2, (grid_g >= 0).astype(float), np.nan))
        a_ord = alpha_ordinal(np.where(grid_g > -2, grid_v.astype(float), np.nan))
    else:
        a_nom = a_ord = float("nan")
    # per question: two layers vectorized, more one by one
    figures: dict[int, QuestionFigures] = {}
    if kmax >= 2:
        two = (k_of[unit_q] == 2) & (grid_g[0] > -2) & (grid_g[1] > -2)
        t = question_figures_two(
            unit_q[two],
            grid_g[0][two],
            grid_v[0][two],
            grid_g[1][two],
            grid_v[1][two],
            len(order),
            size_a=grid_n[0][two],
            size_b=grid_n[1][two],
        )
        for qi in np.flatnonzero(k_of[: len(order)] == 2).tolist():
            figures[qi] = QuestionFigures(
                int(t.n_strings[qi]),
                int(t.n_agree[qi]),
                float(t.kappa[qi]),
                float(t.alpha_nominal[qi]),
                float(t.alpha_ordinal[qi]),
                float(t.pair_f1[qi]),
                float(t.ari[qi]),
                float(t.bcubed_f1[qi]),
            )
    for qi in range(len(order)):
        if qi in figures:
            continue
        cols = np.flatnonzero(unit_q == qi)
        marks = [
            {
                int(u): Mark(int(grid_g[p, u]) if grid_g[p, u] >= 0 else None, int(grid_v[p, u]))
                for u in cols
                if grid_g[p, u] > -2
            }
            for p in range(int(k_of[qi]))
        ]
        figures[qi] = question_figures(marks)
    rows = [
        QuestionRow(
            q,
            info.get(q, ("?", 0))[0],
            names[qindex[q]],
            figures[qindex[q]],
            info.get(q, ("?", 0))[1],
        )
        for q in order
    ]
    rows.sort(
        key=lambda r: (_sortable(r.figures.percent_agree), _sortable(r.figures.alpha_ordinal), r.pk)
    )
    # throughput: layers and strings judged, median time from first edit to done
    through: dict[str, ThroughputRow] = {}
    for pk, _, name, open_ in layers:
        t_ = through.setdefault(name, ThroughputRow(name, 0, 0, 0, None))
        t_.layers += 1
        t_.strings += judged[pk]
        t_.done += not open_
    spans: dict[str, list[float]] = {}
    for name, span in JudgingLayer.objects.filter(
        question__collection=collection, seconds__isnull=False
    ).values_list("assessor__username", "seconds"):
        spans.setdefault(name, []).append(span)
    for name, ts in spans.items():
        through[name].median_seconds = statistics.median(ts)
    return AgreementReport(
        requested,
        len(complete),
        overall_fig,
        a_nom,
        a_ord,
        pairs,
        rows,
        sorted(through.values(), key=lambda t: t.assessor),
        level_names,
        overall_questions,
    )


def _sortable(x: float) -> float:
    return -1.0 if x != x else x  # nan (nothing to compare) first: it needs a look


# -- the adjudication page and an assessor's layer page ---------------------------------------
@dataclass
class CellMark:
    """A string as one layer (or gold) judged it, ready for a template."""

    judged: bool
    group: int | None = None
    level: str = ""
    layer: int | None = None  # the layer's id (None for gold)

    @property
    def label(self) -> str:
        if not self.judged:
            return "unjudged"
        return f"{self.group} {self.level}" if self.group is not None else "incorrect"


def _cell(j: tuple | None, codes: dict[int, str]) -> CellMark:
    if j is None:
        return CellMark(False)
    group, level_id = j
    return CellMark(True, group, codes.get(level_id, "") if group is not None else "")


def adjudication_view(question: Question) -> dict:
    """What the adjudication page shows: the layers side by side (one column each), the
    gold judgment of every string, which strings differ, the layers' synsets (to take one
    whole) and gold's synsets (to merge or to place a string no layer judged in).  Five
    queries.  While a layer is open, only how many (``waiting``): nothing of the layers,
    to anyone (blindness), and nothing to adjudicate yet (``_refuse_while_open``)."""
    levels = list(Level.objects.filter(collection_id=question.collection_id).order_by("order"))
    codes = {lv.pk: lv.code for lv in levels}
    lays = list(
        JudgingLayer.objects.filter(question=question)
        .select_related("assessor")
        .order_by("assessor__username")
    )
    waiting = sum(not la.done for la in lays)
    if waiting:
        return {
            "question": question,
            "collection": question.collection,
            "levels": levels,
            "layers": [],
            "n_layers": len(lays),
            "waiting": waiting,
            "rows": [],
            "layer_synsets": [],
            "gold_synsets": [],
            "all_done": False,
            "n_differ": 0,
        }
    rows_by_layer: dict[int, dict[int, tuple]] = {la.pk: {} for la in lays}
    for layer_id, string_id, group, level_id in LayerJudgment.objects.filter(
        layer__question=question
    ).values_list("layer_id", "string_id", "group", "level_id"):
        rows_by_layer[layer_id][string_id] = (group, level_id)
    strings = list(
        AnswerString.objects.filter(question=question).select_related("synset").order_by("id")
    )
    values = {lv.pk: len(levels) - i for i, lv in enumerate(levels)}
    marks = {
        la.pk: {
            s: Mark(g, values.get(lv, 0) if g is not None else 0)
            for s, (g, lv) in rows_by_layer[la.pk].items()
        }
        for la in lays
    }
    agreed = judged_alike([marks[la.pk] for la in lays])
    rows = []
    for s in strings:
        agree = s.pk in agreed
        gold = CellMark(
            s.judged_at is not None,
            s.synset.ordinal if s.synset else None,
            codes.get(s.level_id, ""),
        )
        cells = [_cell(rows_by_layer[la.pk].get(s.pk), codes) for la in lays]
        for cell, la in zip(cells, lays, strict=True):
            cell.layer = la.pk
        rows.append(
            {
                "string": s,
                "cells": cells,
                "gold": gold,
                "differs": not agree,
                # no layer judged it (pooled after they were done): placed in gold directly
                "unlayered": bool(lays) and not any(c.judged for c in cells),
            }
        )
    text = {s.pk: s.text for s in strings}
    layer_synsets = []
    for la in lays:
        groups: dict[int, list[str]] = {}
        for s, (g, _) in sorted(rows_by_layer[la.pk].items()):
            if g is not None:
                groups.setdefault(g, []).append(text.get(s, "?"))
        layer_synsets.append({"layer": la, "groups": sorted(groups.items())})
    gold_synsets: dict[int, dict] = {}
    for s in strings:
        if s.synset is not None:
            gold_synsets.setdefault(
                s.synset_id, {"pk": s.synset_id, "ordinal": s.synset.ordinal, "texts": []}
            )["texts"].append(s.text)
    return {
        "question": question,
        "collection": question.collection,
        "levels": levels,
        "layers": lays,
        "rows": rows,
        "layer_synsets": layer_synsets,
        "gold_synsets": sorted(gold_synsets.values(), key=lambda g: g["ordinal"]),
        "n_layers": len(lays),
        "waiting": 0,
        "all_done": bool(lays),
        "n_differ": sum(r["differs"] and not r["gold"].judged for r in rows),
    }


def layer_view(layer: JudgingLayer) -> dict:
    """What an assessor's layer page shows: every string of the question with this
    layer's judgment, the layer's synsets, the levels.  Three queries."""
    question = layer.question
    levels = list(Level.objects.filter(collection_id=question.collection_id).order_by("order"))
    codes = {lv.pk: lv.code for lv in levels}
    mine = {
        s: (g, lv) for s, g, lv in layer.judgments.values_list("string_id", "group", "level_id")
    }
    strings = list(
        AnswerString.objects.filter(question=question)
        .order_by("id")
        .only("pk", "text", "question_id")
    )
    rows = [{"string": s, "cell": _cell(mine.get(s.pk), codes)} for s in strings]
    groups: dict[int, list[str]] = {}
    for r in rows:
        if r["cell"].group is not None:
            groups.setdefault(r["cell"].group, []).append(r["string"].text)
    # blindness: the other layers only once every layer is done (``readable_by``)
    others = []
    if layer.done:
        others = list(
            JudgingLayer.objects.readable_by(layer.assessor)
            .filter(question=question)
            .exclude(pk=layer.pk)
            .select_related("assessor")
            .order_by("id")
        )
        theirs: dict[int, dict[int, tuple]] = {o.pk: {} for o in others}
        for layer_id, s, g, lv in LayerJudgment.objects.filter(layer__in=others).values_list(
            "layer_id", "string_id", "group", "level_id"
        ):
            theirs[layer_id][s] = (g, lv)
        for r in rows:
            r["others"] = [_cell(theirs[o.pk].get(r["string"].pk), codes) for o in others]
    return {
        "question": question,
        "collection": question.collection,
        "layer": layer,
        "levels": levels,
        "rows": rows,
        "groups": sorted(groups.items()),
        "others": others,
        "n_unjudged": sum(not r["cell"].judged for r in rows),
    }


# -- an assessor's layer in the usual judging workspace ---------------------------------------
class LayerSynset:
    """A synset of a layer in the shape the judging workspace shows a gold synset
    (``AnswerSynset`` with ``members``, ``best``, ``best_rank``): its number in the layer
    is both its ``pk`` and its ``ordinal`` (the page's synset list carries the numbers;
    the layer's version guards them)."""

    __slots__ = ("best", "best_rank", "label", "members", "ordinal", "pk", "shown_label")

    def __init__(self, group: int) -> None:
        self.pk = self.ordinal = group
        self.label = self.shown_label = ""
        self.members: list = []
        self.best: Level | None = None
        self.best_rank: int | None = None

    @property
    def id(self) -> int:
        return self.pk


def layer_status(layer: JudgingLayer) -> str:
    """The layer's progress as a question status: to do, in progress, done."""
    if layer.done:
        return QuestionStatus.DONE
    return QuestionStatus.IN_PROGRESS if layer.started_at else QuestionStatus.TODO


def layer_workspace(layer: JudgingLayer) -> dict:
    """What the usual judging workspace shows for the assessor's ``layer`` of a question,
    in the keys and shapes of ``selectors.question_workspace``: the layer's synsets with
    their strings and best level, the strings not judged in the layer as candidates (most
    frequent in the runs first, with suggestions from the layer's own synsets), the ones
    judged incorrect in it.  Nothing of gold or of the other layers (blindness, DESIGN.md
    section 9).  A fixed number of queries."""
    from .selectors import WorkspaceString
    from .suggest import Suggester

    question = layer.question
    levels = list(Level.objects.filter(collection_id=question.collection_id).order_by("order"))
    by_level = {lv.pk: lv for lv in levels}
    rank = {lv.pk: i for i, lv in enumerate(levels, start=1)}
    mine = {
        s: (g, lv) for s, g, lv in layer.judgments.values_list("string_id", "group", "level_id")
    }
    freq = run_frequencies(question)
    groups: dict[int, LayerSynset] = {}
    candidates, incorrect = [], []
    for pk, text, key, variants in (
        AnswerString.objects.filter(question_id=question.pk)
        .order_by("id")
        .values_list("id", "text", "key", "variants")
    ):
        group, level_id = mine.get(pk, (None, None))
        s = WorkspaceString(pk, text, key, group, level_id, pk in mine, variants)
        s.freq = freq.get(key, 0)
        if group is not None and level_id in by_level:
            syn = groups.get(group) or groups.setdefault(group, LayerSynset(group))
            s.level_obj = lv = by_level[level_id]
            s.level_rank = rank[level_id]
            syn.members.append(s)
            if syn.best is None or lv.order < syn.best.order:
                syn.best, syn.best_rank = lv, s.level_rank
        elif pk in mine:
            s.synset_id = s.level_id = None
            incorrect.append(s)
        else:
            candidates.append(s)
        s.token = state_token(s.synset_id, s.level_id, s.judged)
    synsets = [groups[g] for g in sorted(groups)]
    candidates.sort(key=lambda s: (-s.freq, s.pk))
    suggester = Suggester(
        {syn: [t for s in syn.members for t in (s.text, *s.variants)] for syn in synsets},
        incorrect=[t for s in incorrect for t in (s.text, *s.variants)],
        mode=question.collection.matching_mode,
    )
    for c, hit in zip(candidates, suggester.suggest_many(c.text for c in candidates), strict=True):
        if hit is not None:
            c.suggestion, c.suggestion_score = hit.synset, hit.score
            c.suggestion_reason = hit.reason
    return {
        "levels": levels,
        "synsets": synsets,
        "candidates": candidates,
        "incorrect": incorrect,
        "n_strings": sum(len(s.members) for s in synsets) + len(candidates) + len(incorrect),
        "page_synsets": " ".join(str(s.pk) for s in synsets),
    }


# action -> what happened in the layer, after the user's name ({text}: the string, quoted)
_LAYER_WORDS = {
    "layer_new_synset": "put {text} in a new synset",
    "layer_add": "put {text} in a synset",
    "layer_incorrect": "judged {text} incorrect",
    "layer_level": "changed the level of {text}",
    "layer_unjudge": "returned {text} to the candidates",
    "layer_merge": "merged synsets",
    "layer_split": "split strings out into a new synset",
    "layer_undo": "undid the last change",
    "layer_done": "marked the layer done",
    "layer_reopen": "reopened the layer",
}


def layer_history(layer: JudgingLayer, limit: int = 30) -> list[dict]:
    """The latest events of ``layer`` (its own only, never gold's or another layer's),
    newest first, each with ``sentence`` in words as the workspace's history shows it."""
    rows = list(
        JudgmentEvent.objects.filter(layer=layer)
        .order_by("-id")
        .values("created_at", "action", "after", user_name=F("user__username"))[:limit]
    )
    for row in rows:
        after = row.pop("after") or {}
        text = f"“{after['text']}”" if after.get("text") else "a string"
        words = _LAYER_WORDS.get(row["action"], row["action"].replace("_", " "))
        row["sentence"] = f"{row['user_name'] or 'system'} {words.format(text=text)}"
    return rows


def layer_others(layer: JudgingLayer) -> dict:
    """Once every layer of ``layer``'s question is done: the other layers (``readable_by``)
    and, per string, this layer's judgment beside theirs.  Before that nothing of them but
    ``waiting``, how many other layers are still open (once this one is done), and
    ``sealed`` (``layer_sealed``: the layer can no longer be reopened)."""
    if not layer.done:
        return {"others": [], "rows": [], "waiting": 0, "sealed": False}
    waiting = (
        JudgingLayer.objects.filter(question_id=layer.question_id, done_at__isnull=True)
        .exclude(pk=layer.pk)
        .count()
    )
    sealed = layer_sealed(layer)
    if waiting:
        return {"others": [], "rows": [], "waiting": waiting, "sealed": sealed}
    view = layer_view(layer)
    return {"others": view["others"], "rows": view["rows"], "waiting": 0, "sealed": sealed}


def my_layers(questions: Sequence[Question], user: AnyUser) -> None:
    """Set ``q.my_layer`` (the user's layer of it, or None) on each of ``questions``; for a
    question judged in a layer, its status and counts become the layer's (``status``,
    ``n_synsets``, ``n_unjudged``), so a queue shows nothing of gold (one query)."""
    mine = {
        la.question_id: la
        for la in JudgingLayer.objects.filter(
            question__in=[q.pk for q in questions], assessor=user
        ).annotate(n=Count("judgments"), groups=Count("judgments__group", distinct=True))
    }
    for q in questions:
        q.my_layer = la = mine.get(q.pk)
        if la is None:
            continue
        q.status = layer_status(la)
        q.n_synsets = la.groups
        q.n_unjudged = max(getattr(q, "n_strings", 0) - la.n, 0)


def filter_as_seen_by(
    qs: QuestionQuerySet, user: AnyUser, *, status: str = "", unjudged: str = ""
) -> QuestionQuerySet:
    """The question list's status and unjudged filters for an assessor (``qs`` from
    ``question_list_queryset`` with its counts, unfiltered on these): a question they
    judge in a layer is filtered on the layer, as the list shows it (``my_layers``), never
    on gold (blindness); the others on gold."""
    mine = JudgingLayer.objects.filter(question=OuterRef("pk"), assessor=user)
    qs = qs.annotate(in_my_layer=Exists(mine))
    gold = Q(in_my_layer=False)
    if status:
        layer_status = {
            QuestionStatus.DONE: mine.filter(done_at__isnull=False),
            QuestionStatus.IN_PROGRESS: mine.filter(done_at__isnull=True, started_at__isnull=False),
            QuestionStatus.TODO: mine.filter(done_at__isnull=True, started_at__isnull=True),
        }.get(status)
        layered = Exists(layer_status) if layer_status is not None else Value(False)
        qs = qs.filter((gold & Q(status=status)) | Q(layered))
    if unjudged in ("0", "1"):
        judged = (
            LayerJudgment.objects.filter(layer__question=OuterRef("pk"), layer__assessor=user)
            .order_by()
            .values("layer")
            .annotate(c=Count("pk"))
            .values("c")
        )
        qs = qs.annotate(
            n_layer_unjudged=F("n_strings")
            - Coalesce(Subquery(judged, output_field=IntegerField()), Value(0))
        )
        lookup = "gt" if unjudged == "1" else "exact"
        qs = qs.filter(
            (gold & Q(**{f"n_unjudged__{lookup}": 0}))
            | Q(in_my_layer=True, **{f"n_layer_unjudged__{lookup}": 0})
        )
    return qs
