"""The judging workspace's operations (DESIGN.md section 4): each posted ``op`` with its
form and the write it calls, on gold (``OPERATIONS``) and on an assessor's layer
(``LAYER_OPERATIONS``, the same keys and forms), and the one function that validates and
applies them for both workspaces' views; the adjudication page's operations
(``ADJUDICATION_OPERATIONS``, DESIGN.md section 9) by the same mechanism."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils.translation import gettext, gettext_noop

from config.htmx import HtmxHttpRequest

from . import adjudication, forms, judging, layers
from .edits import Conflict
from .models import JudgingLayer, JudgmentEvent, Question, QuestionStatus, Role

# operation -> (its form, the service call with the form's cleaned data ``d`` and ``c``: the
# question, the acting user and the version the page showed, plus ``organizer`` for undo)
OPERATIONS: dict[str, tuple[type[forms.JudgeForm], Callable[..., JudgmentEvent]]] = {
    "add": (
        forms.StringJudgeForm,
        lambda d, c: judging.string_judge(
            string=d["string"], synset=d["synset"], level=d["level"], expect=d["expect"], **c
        ),
    ),
    "new": (
        forms.StringLevelForm,
        lambda d, c: judging.string_judge(
            string=d["string"], new_synset=True, level=d["level"], expect=d["expect"], **c
        ),
    ),
    "incorrect": (
        forms.StringForm,
        lambda d, c: judging.string_judge(string=d["string"], expect=d["expect"], **c),
    ),
    "level": (
        forms.StringLevelForm,
        lambda d, c: judging.string_set_level(
            string=d["string"], level=d["level"], expect=d["expect"], **c
        ),
    ),
    "unjudge": (
        forms.StringForm,
        lambda d, c: judging.string_unjudge(string=d["string"], expect=d["expect"], **c),
    ),
    "edit": (
        forms.StringEditForm,
        lambda d, c: judging.string_edit(
            string=d["string"], text=d["text"], expect=d["expect"], **c
        ),
    ),
    "delete": (
        forms.StringForm,
        lambda d, c: judging.string_delete(string=d["string"], expect=d["expect"], **c),
    ),
    "type": (
        forms.StringTypeForm,
        lambda d, c: judging.string_add(
            text=d["text"],
            synset=d["synset"],
            level=d["level"],
            new_synset=d["target"] == "new",
            **c,
        ),
    ),
    "merge": (
        forms.SynsetMergeForm,
        lambda d, c: judging.synset_merge(synsets=[d["synset"], *d["merge"]], **c),
    ),
    "split": (forms.SynsetSplitForm, lambda d, c: judging.synset_split(strings=d["strings"], **c)),
    "nil": (forms.LevelOnlyForm, lambda d, c: judging.question_mark_nil(level=d["level"], **c)),
    "notes": (forms.NotesForm, lambda d, c: judging.question_set_notes(notes=d["notes"], **c)),
    "done": (
        forms.JudgeForm,
        lambda d, c: judging.question_set_status(status=QuestionStatus.DONE, **c),
    ),
    "reopen": (
        forms.JudgeForm,
        lambda d, c: judging.question_set_status(status=QuestionStatus.IN_PROGRESS, **c),
    ),
    "undo": (forms.JudgeForm, lambda d, c: judging.question_undo(any_user=d["organizer"], **c)),
}


def apply_operation(
    request: HtmxHttpRequest,
    operations: Mapping[str, tuple[type[forms.JudgeForm], Callable[..., JudgmentEvent]]],
    context: dict[str, Any],
    **data: Any,
) -> JudgmentEvent:
    """Validate the judging operation posted by the workspace with its form in
    ``operations`` and apply it: the call gets the form's cleaned data (and ``data``) and
    ``context`` with the version the page showed.  Conflict when it is refused: nothing
    written.  Gold's operations (``OPERATIONS``) and a layer's (``LAYER_OPERATIONS``) alike."""
    op = request.POST.get("op", "")
    if op not in operations:
        raise Conflict(gettext("Unknown operation %(op)r.") % {"op": op})
    form_class, call = operations[op]
    form = form_class(request.POST)
    if not form.is_valid():
        raise Conflict(form.refusal())
    return call({**form.cleaned_data, **data}, {**context, "version": form.cleaned_data["version"]})


def apply_to_gold(request: HtmxHttpRequest, question: Question, role: Role) -> JudgmentEvent:
    """Validate and apply the judging operation posted by the workspace on gold."""
    return apply_operation(
        request,
        OPERATIONS,
        {"question": question, "by": request.user},
        organizer=role == Role.ORGANIZER,
    )


def _group(ref) -> int | None:
    """A layer's synset number from the workspace's ``synset`` / ``ordinal`` field."""
    if ref is None or isinstance(ref, int):
        return ref
    return ref.pk if ref.pk is not None else ref.ordinal


def _not_in_layers(what: str):
    def refuse(d, c):
        raise Conflict(
            gettext(
                "%(what)s is not available in your layer: you judge the strings as they are; "
                "the organizers change the question itself."
            )
            % {"what": gettext(what)}
        )

    return refuse


def _layer_merge(d: dict, c: dict) -> JudgmentEvent:
    if d["synset"] is None:
        raise Conflict(gettext("Choose the synset of your layer to merge into."))
    return layers.layer_merge(groups=[_group(d["synset"]), *d["merge"]], **c)


# operation -> (its form, the layer service called with the form's data ``d`` and ``c``: the
# layer, the acting user and the layer's version the page showed): the keys and forms of the
# gold workspace (``OPERATIONS``), acting on the assessor's layer
LAYER_OPERATIONS: dict[str, tuple[type[forms.JudgeForm], Callable[..., JudgmentEvent]]] = {
    "add": (
        forms.StringJudgeForm,
        lambda d, c: layers.layer_judge(
            string=d["string"], group=_group(d["synset"]), level=d["level"], expect=d["expect"], **c
        ),
    ),
    "new": (
        forms.StringLevelForm,
        lambda d, c: layers.layer_judge(
            string=d["string"], new_group=True, level=d["level"], expect=d["expect"], **c
        ),
    ),
    "incorrect": (
        forms.StringForm,
        lambda d, c: layers.layer_judge(string=d["string"], expect=d["expect"], **c),
    ),
    "level": (
        forms.StringLevelForm,
        lambda d, c: layers.layer_set_level(
            string=d["string"], level=d["level"], expect=d["expect"], **c
        ),
    ),
    "unjudge": (
        forms.StringForm,
        lambda d, c: layers.layer_unjudge(string=d["string"], expect=d["expect"], **c),
    ),
    "merge": (forms.SynsetMergeForm, _layer_merge),
    "split": (forms.SynsetSplitForm, lambda d, c: layers.layer_split(strings=d["strings"], **c)),
    "done": (
        forms.JudgeForm,
        lambda d, c: layers.layer_mark_done(layer=c["layer"], by=c["by"], done=True),
    ),
    "reopen": (
        forms.JudgeForm,
        lambda d, c: layers.layer_mark_done(layer=c["layer"], by=c["by"], done=False),
    ),
    "undo": (forms.JudgeForm, lambda d, c: layers.layer_undo(layer=c["layer"], by=c["by"])),
    "edit": (forms.JudgeForm, _not_in_layers(gettext_noop("Correcting a string"))),
    "delete": (forms.JudgeForm, _not_in_layers(gettext_noop("Deleting a string"))),
    "type": (forms.JudgeForm, _not_in_layers(gettext_noop("Adding a string"))),
    "nil": (forms.JudgeForm, _not_in_layers(gettext_noop("Marking the question NIL"))),
    "notes": (forms.JudgeForm, _not_in_layers(gettext_noop("Editing the question's notes"))),
}


def apply_to_layer(request: HtmxHttpRequest, layer: JudgingLayer) -> JudgmentEvent:
    """The workspace's operation on the user's layer, validated and applied as on gold."""
    return apply_operation(request, LAYER_OPERATIONS, {"layer": layer, "by": request.user})


# operation -> (its form, the write called with the form's data ``d`` and ``c``: the question,
# the acting user and gold's version the adjudication page showed)
ADJUDICATION_OPERATIONS: dict[str, tuple[type[forms.AdjudicateForm], Callable[..., Any]]] = {
    "take": (
        forms.AdjudicateTakeForm,
        lambda d, c: adjudication.adjudicate_take(layer=d["layer"], strings=[d["string"]], **c),
    ),
    "take_synset": (
        forms.AdjudicateTakeSynsetForm,
        lambda d, c: adjudication.adjudicate_take(layer=d["layer"], group=d["group"], **c),
    ),
    "level": (
        forms.AdjudicateLevelForm,
        lambda d, c: judging.string_set_level(string=d["string"], level=d["level"], **c),
    ),
    "incorrect": (
        forms.AdjudicateStringForm,
        lambda d, c: judging.string_judge(string=d["string"], **c),
    ),
    "merge": (
        forms.AdjudicateMergeForm,
        lambda d, c: judging.synset_merge(synsets=d["synsets"], **c),
    ),
    "place": (
        forms.AdjudicatePlaceForm,
        lambda d, c: adjudication.adjudicate_place(
            string=d["string"],
            synset=d["synset"],
            new_synset=d["synset"] is None,
            level=d["level"],
            **c,
        ),
    ),
    "undo": (
        forms.AdjudicateForm,
        lambda d, c: judging.question_undo(question=c["question"], by=c["by"], any_user=True),
    ),
    "agree": (
        forms.AdjudicateForm,
        lambda d, c: adjudication.question_layers_to_gold(question=c["question"], by=c["by"]),
    ),
}


class Incomplete(Exception):
    """The adjudication page's request lacks what its operation needs (nothing written)."""


def apply_adjudication(
    request: HtmxHttpRequest, question: Question, version: str | None
) -> JudgmentEvent | None:
    """Validate the operation posted by the adjudication page with its form in
    ``ADJUDICATION_OPERATIONS`` and apply it to gold: Conflict for an unknown operation or
    a refusal, Incomplete for a request its form refuses."""
    op = request.POST.get("op", "")
    if op not in ADJUDICATION_OPERATIONS:
        raise Conflict(gettext("Unknown operation %(op)r.") % {"op": op})
    form_class, call = ADJUDICATION_OPERATIONS[op]
    form = form_class(request.POST)
    if not form.is_valid():
        raise Incomplete(form.errors.as_text())
    return call(form.cleaned_data, {"question": question, "by": request.user, "version": version})
