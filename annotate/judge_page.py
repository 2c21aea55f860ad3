"""The judging workspace's page (annotate/question_judge.html, DESIGN.md sections 4 and 9):
one builder for gold and for an assessor's layer, so both views hand the template the same
typed structure with the same keys."""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from typing import Any

from django.urls import reverse

from config.htmx import HtmxHttpRequest

from . import layer_selectors, presence
from .models import AnswerString, Collection, JudgingLayer, Question, QuestionStatus, Role
from .selectors import (
    consistent_read,
    question_history,
    question_is_unassigned,
    queue_position,
    workspace_edit_string,
)
from .workspace_selectors import Workspace, question_workspace


@dataclass(slots=True)
class JudgePage:
    """What question_judge.html reads, gold or layer alike; ``layer``, ``layer_compare`` and
    ``can_adjudicate`` are the layer's extras (None / False on gold)."""

    question: Question
    collection: Collection
    role: str
    may_write: bool
    notice: str
    notice_kind: str
    is_done: bool
    claimable: bool
    history: list[dict[str, Any]]
    edit_string: AnswerString | None
    queue_position: tuple[int, int] | None
    others_here: list[str]
    act_url: str
    workspace: Workspace
    layer: JudgingLayer | None = None
    layer_compare: dict | None = None
    can_adjudicate: bool = False

    def context(self) -> dict[str, Any]:
        """The template's context: the fields, with the workspace's own spread out."""
        ws = self.workspace
        return {
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name != "workspace"},
            "levels": ws.levels,
            "synsets": ws.synsets,
            "candidates": ws.candidates,
            "incorrect": ws.incorrect,
            "n_strings": ws.n_strings,
            "page_synsets": ws.page_synsets,
        }


def judge_page(
    request: HtmxHttpRequest,
    question: Question,
    role: str,
    *,
    may_write: bool,
    notice: str = "",
    notice_kind: str = "warning",
    layer: JudgingLayer | None = None,
) -> JudgePage:
    """The judging workspace of ``question`` as ``request.user`` sees it: gold, or with
    ``layer`` the assessor's own layer (its synsets, version, progress and history; nothing
    of gold or of the other layers, not even who else judges the question)."""
    if layer is not None:
        return _layer_page(request, layer, role, notice, notice_kind)
    ws = question_workspace(question)
    edit_string = (
        workspace_edit_string(question, request.GET.get("edit", ""))
        if may_write and request.method == "GET"
        else None
    )
    return JudgePage(
        question=question,
        collection=question.collection,
        role=role,
        may_write=may_write,
        notice=notice,
        notice_kind=notice_kind,
        is_done=question.status == QuestionStatus.DONE,
        claimable=may_write and role != Role.ORGANIZER and question_is_unassigned(question),
        history=question_history(question),
        edit_string=edit_string,
        queue_position=queue_position(request.user, question),
        others_here=presence.seen_on_question(question.pk, request.user.get_username()),
        act_url=reverse("annotate:question-act", args=[question.pk]),
        workspace=ws,
    )


def _layer_page(
    request: HtmxHttpRequest, layer: JudgingLayer, role: str, notice: str, notice_kind: str
) -> JudgePage:
    question = layer.question
    with consistent_read():  # the page's version is that of what it shows
        layer.refresh_from_db(fields=["version", "started_at", "done_at"])
        ws = layer_selectors.layer_workspace(layer)
    # the page's question shows the layer's version and progress; it is never saved
    shown = copy.copy(question)
    shown.version, shown.notes = layer.version, ""
    shown.status = layer_selectors.layer_status(layer)
    presence.seen_on_question(question.pk, request.user.get_username())  # recorded, not shown
    return JudgePage(
        question=shown,
        collection=question.collection,
        role=role,
        may_write=True,
        notice=notice,
        notice_kind=notice_kind,
        is_done=layer.done,
        claimable=False,
        history=layer_selectors.layer_history(layer),
        edit_string=None,
        queue_position=queue_position(request.user, question),
        others_here=[],
        act_url=reverse("annotate:question-layer-act", args=[question.pk]),
        workspace=ws,
        layer=layer,
        layer_compare=layer_selectors.layer_others(layer),
        can_adjudicate=layer.done and layer_selectors.can_adjudicate(request.user, question, role),
    )
