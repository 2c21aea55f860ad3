"""Pages of independent judging (DESIGN.md section 9): the agreement page, the request
for layers, the adjudication page, an assessor's own layer, the layers CSV.

Function views, thin: reads in ``layer_selectors``, ``agreement_report`` and
``selectors``, writes in ``layers``, ``adjudication`` and ``judging`` (the workspace's
operations through ``operations``), markup in the templates.  Participants never see a
layer; an assessor sees only their own layer of a question until they marked it done."""

from __future__ import annotations

import copy

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from config.downloads import csv_download
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from config.ids import request_id, request_ids

from . import (
    adjudication,
    agreement_report,
    edits,
    judging,
    layer_selectors,
    layers,
    operations,
    presence,
)
from .layer_io import export_layers, layers_import
from .models import (
    JUDGE_ROLES,
    Collection,
    JudgingLayer,
    Membership,
    Question,
    QuestionStatus,
    Role,
)
from .permissions import require_role
from .selectors import consistent_read, next_question, question_list_queryset, queue_position

# -- organizer: agreement, requests, CSV --------------------------------------------------------
QUESTIONS_PER_PAGE = 200


@require_GET
def collection_agreement(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    report = agreement_report.collection_agreement(collection)
    judges = (
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES)
        .select_related("user")
        .order_by("user__username")
    )
    confusion = None
    if report.overall is not None:
        confusion = list(zip(report.level_names, report.overall.confusion.tolist(), strict=True))
    # the questions, lowest agreement first, a page at a time (the report holds them all:
    # no query per page)
    page = Paginator(report.questions, QUESTIONS_PER_PAGE).get_page(request.GET.get("page"))
    return render_page(
        request,
        "annotate/agreement.html",
        {
            "collection": collection,
            "report": report,
            "judges": judges,
            "page": page,
            "confusion": confusion,
            "queue": layer_selectors.adjudication_queue(collection).count(),
            # the request form's filters, filled in from the question list's (its link)
            "filters": request.GET,
            "statuses": QuestionStatus.choices,
        },
    )


@require_POST
def collection_layers_request(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Ask for k independent judgments of the questions matching the question list's
    filters (status, assessor, unjudged, a search in qid and text): all of them, or a
    seeded random sample of n."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    p = request.POST
    users = get_user_model().objects
    assessors = list(users.filter(pk__in=request_ids(p.getlist("assessors"))).order_by("username"))
    adjudicator_id = request_id(p.get("adjudicator", ""))
    adjudicator = users.filter(pk=adjudicator_id).first() if adjudicator_id is not None else None
    # the question list's filters (``f_`` as on its bulk assignment), then all or a sample
    status = p.get("f_status", p.get("status", ""))
    questions = question_list_queryset(
        collection,
        status=status if status in QuestionStatus.values else "",
        assessor=p.get("f_assessor", ""),
        unjudged=p.get("f_unjudged", ""),
        search=p.get("f_q", "").strip(),
    ).only("pk", "qid", "collection_id")
    try:
        k = int(p.get("k") or 2)
        sample = (
            int(p["sample"])
            if p.get("scope", "sample") == "sample" and p.get("sample", "").strip()
            else None
        )
        questions = list(questions)
        if not questions:
            raise edits.Conflict("No question matches the filters; nothing was requested.")
        seed = int(p.get("seed") or 0)
        done = layers.layers_request(
            collection=collection,
            questions=questions,
            assessors=assessors,
            by=request.user,
            k=k,
            sample=sample,
            seed=seed,
            adjudicator=adjudicator,
        )
    except ValueError:
        messages.error(request, "k, the sample size and the seed are whole numbers.")
    except edits.Conflict as e:
        messages.error(request, str(e))
    else:
        messages.success(
            request,
            f"{done.layers} layers requested on {done.questions} "
            f"question{'s' if done.questions != 1 else ''}.",
        )
        if done.layered:
            n = len(done.layered)
            messages.warning(
                request,
                f"{n} question{'s' if n != 1 else ''} left out: "
                f"{'they have' if n != 1 else 'it has'} layers already, which stay as they "
                f"are (more would make more than k): {', '.join(done.layered[:20])}"
                f"{', ...' if n > 20 else ''}.",
            )
        if done.refused:
            n = len(done.refused)
            messages.warning(
                request,
                f"{n} question{'s' if n != 1 else ''} left out: gold was already derived "
                f"from {'their' if n != 1 else 'its'} layers, which more layers would not "
                f"change: {', '.join(done.refused[:20])}{', ...' if n > 20 else ''}.",
            )
    return redirect_to(request, "annotate:collection-agreement", slug)


@require_GET
def collection_layers_csv(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    return csv_download(export_layers(collection), f"{slug}-layers.csv")


@require_POST
def collection_layers_import(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a layers CSV file.")
        return redirect_to(request, "annotate:collection-agreement", slug)
    result = layers_import(
        collection=collection, data=upload.read(), filename=upload.name, by=request.user
    )
    if result.issues:
        for issue in result.issues[:20]:
            messages.error(request, str(issue))
    else:
        messages.success(
            request, f"Imported {result.judgments} judgments in {result.layers} layers."
        )
    return redirect_to(request, "annotate:collection-agreement", slug)


# -- adjudication -----------------------------------------------------------------------------
def _adjudicable(request: HtmxHttpRequest, pk: int) -> Question:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role = require_role(request, question.collection, *JUDGE_ROLES)
    if not layer_selectors.can_adjudicate(request.user, question, role):
        raise PermissionDenied("Only an organizer or the named adjudicator adjudicates.")
    return question


@require_GET
def adjudication_queue(request: HtmxHttpRequest) -> HttpResponse:
    """The questions waiting for the user's adjudication: every one of the collections
    they organize (as their Agreement pages count them), and those whose layer request
    names them the adjudicator."""
    return render_page(
        request,
        "annotate/adjudication_queue.html",
        {"questions": layer_selectors.adjudicator_questions(request.user)},
    )


@require_GET
def question_adjudicate(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    question = _adjudicable(request, pk)
    context = layer_selectors.adjudication_view(question)
    context["is_organizer"] = (
        require_role(request, question.collection, *JUDGE_ROLES) == Role.ORGANIZER
    )
    return render_page(request, "annotate/adjudicate.html", context)


@require_POST
def question_adjudicate_act(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    question = _adjudicable(request, pk)
    p = request.POST
    op, by, version = p.get("op", ""), request.user, p.get("version") or None
    anchor = f"#s{p['string']}" if p.get("string", "").isdigit() else ""
    try:
        with transaction.atomic():
            adjudication.adjudication_lock(question=question, version=version)
            _adjudicate(question, p, op, by, version)
    except (KeyError, ValueError):
        messages.error(request, "That request was incomplete; nothing was changed.")
    except edits.Conflict as e:
        messages.error(request, str(e))
    return redirect_to(
        request, reverse("annotate:question-adjudicate", args=[question.pk]) + anchor
    )


def _adjudicate(question: Question, p, op: str, by, version: str | None) -> None:
    """One operation of the adjudication page's forms on gold (Conflict when refused)."""
    if op == "take":
        adjudication.adjudicate_take(
            question=question,
            layer=int(p["layer"]),
            by=by,
            strings=[int(p["string"])],
            version=version,
        )
    elif op == "take_synset":
        adjudication.adjudicate_take(
            question=question,
            layer=int(p["layer"]),
            by=by,
            group=int(p["group"]),
            version=version,
        )
    elif op == "level":
        judging.string_set_level(
            question=question, string=int(p["string"]), level=p["level"], by=by, version=version
        )
    elif op == "incorrect":
        judging.string_judge(question=question, string=int(p["string"]), by=by, version=version)
    elif op == "merge":
        ids = request_ids(p.getlist("synsets"))
        judging.synset_merge(question=question, synsets=ids, by=by, version=version)
    elif op == "place":
        # a string no layer judged (pooled after they were done) into a gold synset
        synset = p.get("synset", "")
        adjudication.adjudicate_place(
            question=question,
            string=int(p["string"]),
            by=by,
            synset=None if synset == "new" else int(synset),
            new_synset=synset == "new",
            level=p.get("level") or None,
            version=version,
        )
    elif op == "undo":
        judging.question_undo(question=question, by=by, any_user=True)
    elif op == "agree":
        adjudication.question_layers_to_gold(question=question, by=by)
    else:
        raise edits.Conflict(f"Unknown operation {op!r}.")


# -- an assessor's own layer, judged in the usual workspace --------------------------------------
def _own_layer(request: HtmxHttpRequest, pk: int) -> JudgingLayer:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    require_role(request, question.collection, *JUDGE_ROLES)
    layer = layer_selectors.layer_for(question=question, user=request.user)
    if layer is None:
        raise Http404("You have no layer of this question.")
    layer.question = question
    return layer


def workspace_layer(request: HtmxHttpRequest, question: Question, role: str) -> JudgingLayer | None:
    """The layer the judging workspace of ``question`` shows the user: theirs, if they
    have one (an organizer who judges in a layer too sees gold with ``?gold=1``).  None:
    the workspace shows gold, as for a question judged by one assessor."""
    if role == Role.ORGANIZER and request.GET.get("gold") == "1":
        return None
    layer = layer_selectors.layer_for(question=question, user=request.user)
    if layer is not None:
        layer.question = question
    return layer


def _layer_context(
    request: HtmxHttpRequest,
    layer: JudgingLayer,
    role: str,
    notice: str = "",
    kind: str = "warning",
) -> dict:
    """The judging workspace's context (``views._workspace_context``'s keys) for the
    assessor's layer: the layer's synsets and version, its own history, no gold."""
    question = layer.question
    with consistent_read():  # the page's version is that of what it shows
        layer.refresh_from_db(fields=["version", "started_at", "done_at"])
        ws = layer_selectors.layer_workspace(layer)
    # the page's question shows the layer's version and progress; it is never saved
    shown = copy.copy(question)
    shown.version, shown.status, shown.notes = (
        layer.version,
        layer_selectors.layer_status(layer),
        "",
    )
    presence.seen_on_question(question.pk, request.user.get_username())  # recorded, not shown
    return {
        "question": shown,
        "collection": question.collection,
        "role": role,
        "may_write": True,
        "notice": notice,
        "notice_kind": kind,
        "is_done": layer.done,
        "claimable": False,
        "history": layer_selectors.layer_history(layer),
        "edit_string": None,
        "queue_position": queue_position(request.user, question),
        "others_here": [],  # blind: not even who else judges the question
        "act_url": reverse("annotate:question-layer-act", args=[question.pk]),
        "layer": layer,
        "layer_compare": layer_selectors.layer_others(layer),
        "can_adjudicate": layer.done
        and layer_selectors.can_adjudicate(request.user, question, role),
        **ws,
    }


def layer_workspace_page(request: HtmxHttpRequest, layer: JudgingLayer, role: str) -> HttpResponse:
    """The usual judging workspace (annotate/question_judge.html) on the user's layer."""
    return render_page(
        request,
        "annotate/question_judge.html",
        _layer_context(request, layer, role),
        partial="workspace",
    )


@require_GET
def question_layer(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The old address of an assessor's layer: the layer is judged in the usual workspace."""
    layer = _own_layer(request, pk)
    return redirect_to(request, "annotate:question-judge", layer.question_id)


@require_POST
def question_layer_act(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Apply one operation of the judging workspace (``LAYER_OPERATIONS``) to the user's
    layer and answer as ``views.question_act`` does: the refreshed workspace (htmx) or a
    redirect to it, a refused or stale edit with a notice; ``done`` marks the layer done
    and goes on to the next question."""
    layer = _own_layer(request, pk)
    role = require_role(request, layer.question.collection, *JUDGE_ROLES)
    try:
        event = operations.apply_to_layer(request, layer)
    except edits.Conflict as e:
        event, notice = None, f"{e} The workspace has been refreshed."
    else:
        notice = ""
    if request.POST.get("op") == "done" and event is not None:
        question = layer.question
        nxt = next_question(
            request.user,
            collection=question.collection,
            after=question,
            organizer=role == Role.ORGANIZER,
        )
        if nxt is None:
            return redirect_to(request, "annotate:question-list", question.collection.slug)
        return redirect_to(request, "annotate:question-judge", nxt.pk)
    if not request.htmx:
        if notice:
            messages.warning(request, notice)
        return redirect_to(request, "annotate:question-judge", layer.question_id)
    return render_page(
        request,
        "annotate/question_judge.html",
        _layer_context(request, layer, role, notice),
        partial="workspace",
    )
