"""Reads of independent layers (DESIGN.md section 9) for the pages: an assessor's layer
in the judging workspace, its history and, once every layer is done, the others beside
it; the adjudication page; who may adjudicate and what waits for them; a queue's status
as seen by an assessor who judges in a layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils.translation import gettext, gettext_noop

from evaluation.metrics.agreement import (
    Mark,
    judged_alike,
)

from .layer_state import layer_sealed, question_layer_state
from .models import (
    JUDGE_ROLES,
    AnswerString,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    LayerState,
    Level,
    Membership,
    Question,
    QuestionQuerySet,
    QuestionStatus,
    Role,
)
from .selectors import my_queue_questions
from .workspace_selectors import Workspace, WorkspaceString, collection_levels, workspace_build

if TYPE_CHECKING:
    from .edits import AnyUser


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


def layer_for(*, question: Question | int, user: AnyUser) -> JudgingLayer | None:
    """The layer ``user`` judges ``question`` in, or None (the question is judged in gold
    directly by them, as before)."""
    pk = question.pk if isinstance(question, Question) else question
    return JudgingLayer.objects.filter(question_id=pk, assessor=user).first()


# -- reads for the pages ----------------------------------------------------------------------
def adjudication_queue(collection: Collection) -> QuestionQuerySet:
    """Questions of ``collection`` waiting for adjudication (``LayerState.WAITING``: their
    k layers are done and gold still has unjudged strings, the disagreements), by id."""
    return Question.objects.filter(collection=collection).awaiting_adjudication().order_by("id")


def adjudicator_questions(user: AnyUser) -> list[Question]:
    """The questions waiting for ``user``'s adjudication (``awaiting_adjudication``): in the
    collections they organize, every one (as their Agreement pages count them); elsewhere,
    those whose layer request names them the adjudicator, in collections where they still
    judge.  With their collection, the strings left to resolve (``n_unjudged``) and the
    layers' assessors (``layer_assessors``), by collection then id.  Two queries."""
    member = Membership.objects.filter(collection=OuterRef("collection_id"), user_id=user.pk)
    questions = list(
        Question.objects.awaiting_adjudication()
        .filter(
            Exists(member.filter(role=Role.ORGANIZER))
            | (
                Q(layer_request__adjudicator_id=user.pk)
                & Exists(member.filter(role__in=JUDGE_ROLES))
            )
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
    named for -- but, when they judge it in a layer too (an organizer as well), not before
    every layer of it is done (blindness: the adjudication page shows gold and every
    layer, and while one is open how many still are)."""
    if role != Role.ORGANIZER:
        named = LayerRequest.objects.filter(question=question, adjudicator_id=user.pk).exists()
        if not named:
            return False
    # one who judges the question in a layer too is blind until every layer is done
    # (``JudgingLayer.objects.blind_to``), not only theirs
    judges_it = JudgingLayer.objects.filter(question=question, assessor_id=user.pk).exists()
    return (
        not judges_it
        or not JudgingLayer.objects.filter(question=question, done_at__isnull=True).exists()
    )


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
            return gettext("unjudged")
        return f"{self.group} {self.level}" if self.group is not None else gettext("incorrect")


def _cell(j: tuple | None, codes: dict[int, str]) -> CellMark:
    if j is None:
        return CellMark(False)
    group, level_id = j
    return CellMark(True, group, codes.get(level_id, "") if group is not None else "")


def adjudication_view(question: Question) -> dict:
    """What the adjudication page shows: the layers side by side (one column each), the
    gold judgment of every string, which strings differ, the layers' synsets (to take one
    whole) and gold's synsets (to merge or to place a string no layer judged in), and the
    question's ``state`` (``LayerState``).  Six queries.  While a layer is open, only how
    many (``waiting``): nothing of the layers, to anyone (blindness), and nothing to
    adjudicate yet; nor while the question is short of its k layers (it waits for a new
    one): ``adjudication._refuse_until_layers_done``."""
    levels = list(Level.objects.filter(collection_id=question.collection_id).order_by("order"))
    lays = list(
        JudgingLayer.objects.filter(question=question)
        .select_related("assessor")
        .order_by("assessor__username")
    )
    waiting = sum(not la.done for la in lays)
    state = question_layer_state(question)
    if state in (LayerState.OPEN, LayerState.SHORT):
        return {
            "state": state,
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
    rows = _adjudication_rows(strings, lays, rows_by_layer, levels)
    layer_synsets, gold_synsets = _synsets_shown(strings, lays, rows_by_layer)
    return {
        "state": state,
        "question": question,
        "collection": question.collection,
        "levels": levels,
        "layers": lays,
        "rows": rows,
        "layer_synsets": layer_synsets,
        "gold_synsets": gold_synsets,
        "n_layers": len(lays),
        "waiting": 0,
        "all_done": bool(lays),
        "n_differ": sum(r["differs"] and not r["gold"].judged for r in rows),
    }


def _adjudication_rows(
    strings: list[AnswerString],
    lays: list[JudgingLayer],
    rows_by_layer: dict[int, dict[int, tuple]],
    levels: list[Level],
) -> list[dict]:
    """A row per string of the adjudication page: its gold judgment, each layer's, whether
    the layers differ on it and whether no layer judged it."""
    codes = {lv.pk: lv.code for lv in levels}
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
    return rows


def _synsets_shown(
    strings: list[AnswerString],
    lays: list[JudgingLayer],
    rows_by_layer: dict[int, dict[int, tuple]],
) -> tuple[list[dict], list[dict]]:
    """The adjudication page's synsets: each layer's (to take one whole) and gold's (to
    merge, or to place a string no layer judged in), by number."""
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
    return layer_synsets, sorted(gold_synsets.values(), key=lambda g: g["ordinal"])


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


def layer_workspace(layer: JudgingLayer) -> Workspace:
    """What the usual judging workspace shows for the assessor's ``layer`` of a question
    (``workspace_selectors.workspace_build``, as for gold): the layer's synsets with their strings
    and best level, the strings not judged in the layer as candidates (most frequent in the
    runs first, with suggestions from the layer's own synsets), the ones judged incorrect
    in it.  Nothing of gold or of the other layers (blindness, DESIGN.md section 9).  A
    fixed number of queries."""
    question = layer.question
    levels = collection_levels(question)
    mine = {
        s: (g, lv) for s, g, lv in layer.judgments.values_list("string_id", "group", "level_id")
    }
    # a layer's synsets are its groups that hold a string (numbered as the layer numbers them)
    groups = sorted({g for g, _ in mine.values() if g is not None})
    strings = (
        WorkspaceString(
            pk, text, key, *mine.get(pk, (None, None)), judged=pk in mine, variants=variants
        )
        for pk, text, key, variants in AnswerString.objects.filter(question_id=question.pk)
        .order_by("id")
        .values_list("id", "text", "key", "variants")
    )
    return workspace_build(
        question, levels=levels, synsets=[LayerSynset(g) for g in groups], strings=strings
    )


# action -> what happened in the layer, in the page's language ({who}: the user, {text}:
# the string, quoted)
_LAYER_WORDS = {
    "layer_new_synset": gettext_noop("{who} put {text} in a new synset"),
    "layer_add": gettext_noop("{who} put {text} in a synset"),
    "layer_incorrect": gettext_noop("{who} judged {text} incorrect"),
    "layer_level": gettext_noop("{who} changed the level of {text}"),
    "layer_unjudge": gettext_noop("{who} returned {text} to the candidates"),
    "layer_merge": gettext_noop("{who} merged synsets"),
    "layer_split": gettext_noop("{who} split strings out into a new synset"),
    "layer_undo": gettext_noop("{who} undid the last change"),
    "layer_done": gettext_noop("{who} marked the layer done"),
    "layer_reopen": gettext_noop("{who} reopened the layer"),
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
        text = (
            gettext("“%(text)s”") % {"text": after["text"]}
            if after.get("text")
            else gettext("a string")
        )
        who = row["user_name"] or gettext("system")
        words = _LAYER_WORDS.get(row["action"])
        row["sentence"] = (
            gettext(words).format(who=who, text=text)
            if words
            else f"{who} {row['action'].replace('_', ' ')}"
        )
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


def my_queue(user: AnyUser) -> list[Question]:
    """The questions assigned to ``user`` in any collection, with their counts, each as the
    user judges it (gold, or their layer: ``my_layers``): the open ones (in progress, then
    to do) before the done ones, each part by collection (two queries; the order of
    ``for_queue`` otherwise, a stable sort)."""
    questions = my_queue_questions(user)
    my_layers(questions, user)
    rank = {QuestionStatus.IN_PROGRESS: 0, QuestionStatus.TODO: 1}
    return sorted(
        questions,
        key=lambda q: (q.status == QuestionStatus.DONE, q.collection.name, rank.get(q.status, 2)),
    )


def label_layer_states(questions: Sequence[Question]) -> None:
    """Set ``q.layer_state_label`` on each of ``questions`` (read ``with_layer_state``) for
    the organizer's question list: where a question judged in layers stands (waiting for
    adjudication, adjudicated...); empty for the others.  No query."""
    for q in questions:
        q.layer_state_label = LayerState(q.layer_state).label if q.layer_state else ""


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
