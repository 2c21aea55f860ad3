"""Pages of independent judging (DESIGN.md section 9): the agreement page, the request
for layers, the adjudication page, an assessor's own layer, the layers CSV.

Function views, thin: reads in ``layer_selectors``, ``agreement_report`` and
``selectors``, writes in ``layers``, ``adjudication`` and ``judging`` (the workspace's
operations through ``operations``), markup in the templates.  Participants never see a
layer; an assessor sees only their own layer of a question until they marked it done."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from config.downloads import csv_download
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from config.ids import request_id, request_ids
from jobs.models import JobStatus
from jobs.services import JobRefused
from jobs.views import job_started

from . import (
    adjudication,
    agreement_report,
    edits,
    import_jobs,
    layer_jobs,
    layer_selectors,
    operations,
)
from .judge_page import judge_page
from .layer_io import export_layers
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
from .selectors import next_question

# -- organizer: agreement, requests, CSV --------------------------------------------------------
QUESTIONS_PER_PAGE = 200


@require_GET
def collection_agreement(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    report = agreement_report.collection_agreement(collection, reader=request.user)
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
    seeded random sample of n.  A job (``layer_jobs``): made at once over a few hundred
    questions, else on a worker while the page shows its bar."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    p = request.POST
    # the question list's filters (``f_`` as on its bulk assignment), then all or a sample
    status = p.get("f_status", p.get("status", ""))
    try:
        params = {
            "assessors": request_ids(p.getlist("assessors")),
            "adjudicator": request_id(p.get("adjudicator", "")),
            "filters": {
                "status": status if status in QuestionStatus.values else "",
                "assessor": p.get("f_assessor", ""),
                "unjudged": p.get("f_unjudged", ""),
                "search": p.get("f_q", "").strip(),
            },
            "k": int(p.get("k") or 2),
            "sample": (
                int(p["sample"])
                if p.get("scope", "sample") == "sample" and p.get("sample", "").strip()
                else None
            ),
            "seed": int(p.get("seed") or 0),
        }
        job = layer_jobs.layers_request_start(
            collection=collection, user=request.user, params=params
        )
    except ValueError:
        messages.error(request, _("k, the sample size and the seed are whole numbers."))
    except JobRefused as e:
        messages.error(request, _("No layer was requested: %(error)s") % {"error": e})
    else:
        if job.active:
            return job_started(request, job)
        if job.status != JobStatus.SUCCEEDED:
            messages.error(request, job.message)
        else:
            messages.success(request, job.result["success"])
            for warning in job.result["warnings"]:
                messages.warning(request, warning)
    return redirect_to(request, "annotate:collection-agreement", slug)


@require_GET
def collection_layers_csv(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    return csv_download(export_layers(collection, reader=request.user), f"{slug}-layers.csv")


@require_POST
def collection_layers_import(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Import a layers CSV as a job (``import_jobs``): a small file at once, a larger one on
    a worker while the page shows its bar; every error of the file, or what it wrote."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, _("Choose a layers CSV file."))
        return redirect_to(request, "annotate:collection-agreement", slug)
    try:
        job = import_jobs.layers_import_start(
            collection=collection, user=request.user, data=upload.read(), filename=upload.name
        )
    except JobRefused as e:
        messages.error(request, _("Nothing imported: %(error)s") % {"error": e})
        return redirect_to(request, "annotate:collection-agreement", slug)
    if job.active:
        return job_started(request, job)
    if job.status == JobStatus.SUCCEEDED:
        messages.success(request, job.message)
    elif job.errors:
        for issue in import_jobs.issues_of(job)[:20]:
            messages.error(request, str(issue))
    else:
        messages.error(request, job.message)
    return redirect_to(request, "annotate:collection-agreement", slug)


# -- adjudication -----------------------------------------------------------------------------
def _adjudicable(request: HtmxHttpRequest, pk: int) -> Question:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role = require_role(request, question.collection, *JUDGE_ROLES)
    if not layer_selectors.can_adjudicate(request.user, question, role):
        raise PermissionDenied(_("Only an organizer or the named adjudicator adjudicates."))
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
    """Apply one operation of the adjudication page's forms to gold
    (``operations.ADJUDICATION_OPERATIONS``) and go back to the page, at the string acted on."""
    question = _adjudicable(request, pk)
    p = request.POST
    version = p.get("version") or None
    anchor = f"#s{p['string']}" if p.get("string", "").isdigit() else ""
    try:
        with transaction.atomic():
            adjudication.adjudication_lock(question=question, version=version)
            operations.apply_adjudication(request, question, version)
    except operations.Incomplete:
        messages.error(request, _("That request was incomplete; nothing was changed."))
    except edits.Conflict as e:
        messages.error(request, str(e))
    return redirect_to(
        request, reverse("annotate:question-adjudicate", args=[question.pk]) + anchor
    )


# -- an assessor's own layer, judged in the usual workspace --------------------------------------
def _own_layer(request: HtmxHttpRequest, pk: int) -> JudgingLayer:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    require_role(request, question.collection, *JUDGE_ROLES)
    layer = layer_selectors.layer_for(question=question, user=request.user)
    if layer is None:
        raise Http404(_("You have no layer of this question."))
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
    """The judging workspace's context for the assessor's layer (``judge_page``, as gold's)."""
    return judge_page(
        request, layer.question, role, may_write=True, notice=notice, notice_kind=kind, layer=layer
    ).context()


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
