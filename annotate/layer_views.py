"""Pages of independent judging (DESIGN.md section 9): the agreement page, the request
for layers, the adjudication page, an assessor's own layer, the layers CSV.

Function views, thin: reads in ``layers``/``selectors``, writes in ``layers``/``services``,
markup in the templates.  Participants never see a layer; an assessor sees only their
own layer of a question until they marked it done."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from config.downloads import content_disposition

from . import layers, services
from .layer_io import export_layers, layers_import
from .models import Collection, JudgingLayer, Membership, Question, QuestionStatus, Role
from .permissions import require_role


# -- organizer: agreement, requests, CSV --------------------------------------------------------
@require_GET
def collection_agreement(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    report = layers.collection_agreement(collection)
    judges = (
        Membership.objects.filter(collection=collection, role__in=[Role.ORGANIZER, Role.ASSESSOR])
        .select_related("user")
        .order_by("user__username")
    )
    confusion = None
    if report.overall is not None:
        confusion = list(zip(report.level_names, report.overall.confusion.tolist(), strict=True))
    return TemplateResponse(
        request,
        "annotate/agreement.html",
        {
            "collection": collection,
            "report": report,
            "judges": judges,
            "questions": report.questions[:200],
            "confusion": confusion,
            "queue": layers.adjudication_queue(collection).count(),
        },
    )


@require_POST
def collection_layers_request(request: HttpRequest, slug: str) -> HttpResponse:
    """Ask for k independent judgments of all questions, those with a status, or a random
    sample of n."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    p = request.POST
    users = get_user_model().objects
    assessors = list(
        users.filter(pk__in=[int(v) for v in p.getlist("assessors") if v.isdigit()]).order_by(
            "username"
        )
    )
    adjudicator = (
        users.filter(pk=int(p["adjudicator"])).first()
        if p.get("adjudicator", "").isdigit()
        else None
    )
    questions = Question.objects.filter(collection=collection)
    if p.get("status") in QuestionStatus.values:
        questions = questions.filter(status=p["status"])
    try:
        k = int(p.get("k") or 2)
        sample = int(p["sample"]) if p.get("sample", "").strip() else None
        seed = int(p.get("seed") or 0)
        done = layers.layers_request(
            collection=collection,
            questions=list(questions),
            assessors=assessors,
            by=request.user,
            k=k,
            sample=sample,
            seed=seed,
            adjudicator=adjudicator,
        )
    except ValueError:
        messages.error(request, "k, the sample size and the seed are whole numbers.")
    except services.Conflict as e:
        messages.error(request, str(e))
    else:
        messages.success(
            request,
            f"{done.layers} layers requested on {done.questions} "
            f"question{'s' if done.questions != 1 else ''}.",
        )
    return redirect("annotate:collection-agreement", slug)


@require_GET
def collection_layers_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    response = HttpResponse(export_layers(collection), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition(f"{slug}-layers.csv")
    return response


@require_POST
def collection_layers_import(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a layers CSV file.")
        return redirect("annotate:collection-agreement", slug)
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
    return redirect("annotate:collection-agreement", slug)


# -- adjudication -----------------------------------------------------------------------------
def _adjudicable(request: HttpRequest, pk: int) -> Question:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role = require_role(request, question.collection, Role.ORGANIZER, Role.ASSESSOR)
    if not layers.can_adjudicate(request.user, question, role):
        raise PermissionDenied("Only an organizer or the named adjudicator adjudicates.")
    return question


@require_GET
def question_adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    question = _adjudicable(request, pk)
    return TemplateResponse(request, "annotate/adjudicate.html", layers.adjudication_view(question))


@require_POST
def question_adjudicate_act(request: HttpRequest, pk: int) -> HttpResponse:
    question = _adjudicable(request, pk)
    p = request.POST
    op, by, version = p.get("op", ""), request.user, p.get("version") or None
    anchor = f"#s{p['string']}" if p.get("string", "").isdigit() else ""
    try:
        if op == "take":
            layers.adjudicate_take(
                question=question,
                layer=int(p["layer"]),
                by=by,
                strings=[int(p["string"])],
                version=version,
            )
        elif op == "take_synset":
            layers.adjudicate_take(
                question=question,
                layer=int(p["layer"]),
                by=by,
                group=int(p["group"]),
                version=version,
            )
        elif op == "level":
            services.string_set_level(
                question=question, string=int(p["string"]), level=p["level"], by=by, version=version
            )
        elif op == "incorrect":
            services.string_judge(
                question=question, string=int(p["string"]), by=by, version=version
            )
        elif op == "merge":
            ids = [int(v) for v in p.getlist("synsets") if v.isdigit()]
            services.synset_merge(question=question, synsets=ids, by=by, version=version)
        elif op == "undo":
            services.question_undo(question=question, by=by, any_user=True)
        elif op == "agree":
            layers.question_layers_to_gold(question=question, by=by)
        else:
            raise services.Conflict(f"Unknown operation {op!r}.")
    except (KeyError, ValueError):
        messages.error(request, "That request was incomplete; nothing was changed.")
    except services.Conflict as e:
        messages.error(request, str(e))
    return redirect(reverse("annotate:question-adjudicate", args=[question.pk]) + anchor)


# -- an assessor's own layer --------------------------------------------------------------------
def _own_layer(request: HttpRequest, pk: int) -> JudgingLayer:
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    require_role(request, question.collection, Role.ORGANIZER, Role.ASSESSOR)
    layer = layers.layer_for(question=question, user=request.user)
    if layer is None:
        raise Http404("You have no layer of this question.")
    layer.question = question
    return layer


@require_GET
def question_layer(request: HttpRequest, pk: int) -> HttpResponse:
    layer = _own_layer(request, pk)
    role = require_role(request, layer.question.collection, Role.ORGANIZER, Role.ASSESSOR)
    context = layers.layer_view(layer)
    context["can_adjudicate"] = layers.can_adjudicate(request.user, layer.question, role)
    return TemplateResponse(request, "annotate/question_layer.html", context)


@require_POST
def question_layer_act(request: HttpRequest, pk: int) -> HttpResponse:
    layer = _own_layer(request, pk)
    p = request.POST
    op, by, version = p.get("op", ""), request.user, p.get("version") or None
    anchor = f"#s{p['string']}" if p.get("string", "").isdigit() else ""
    try:
        if op == "judge":
            target = p.get("target", "")
            if target == "new":
                layers.layer_judge(
                    layer=layer,
                    string=int(p["string"]),
                    new_group=True,
                    level=p.get("level") or None,
                    by=by,
                    version=version,
                )
            elif target == "x":
                layers.layer_judge(layer=layer, string=int(p["string"]), by=by, version=version)
            else:
                layers.layer_judge(
                    layer=layer,
                    string=int(p["string"]),
                    group=int(target),
                    level=p.get("level") or None,
                    by=by,
                    version=version,
                )
        elif op == "level":
            layers.layer_set_level(
                layer=layer, string=int(p["string"]), level=p["level"], by=by, version=version
            )
        elif op == "unjudge":
            layers.layer_unjudge(layer=layer, string=int(p["string"]), by=by, version=version)
        elif op == "merge":
            layers.layer_merge(
                layer=layer, groups=[int(p["into"]), int(p["other"])], by=by, version=version
            )
        elif op == "undo":
            layers.layer_undo(layer=layer, by=by)
        elif op in ("done", "reopen"):
            layers.layer_mark_done(layer=layer, by=by, done=op == "done")
        else:
            raise services.Conflict(f"Unknown operation {op!r}.")
    except (KeyError, ValueError):
        messages.error(request, "That request was incomplete; nothing was changed.")
    except services.Conflict as e:
        messages.error(request, str(e))
    return redirect(reverse("annotate:question-layer", args=[layer.question_id]) + anchor)
