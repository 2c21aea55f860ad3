"""A request for independent layers as a background job (issue 24; DESIGN.md section 9):
the agreement page's form names its questions by the question list's filters, and the job
selects them and gives each its layers (``layers.layers_request``, one transaction).  A
request over a few hundred questions runs at once in the request (``INLINE_QUESTIONS``); a
larger one runs on a worker while the page shows its bar (questions done)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from jobs.models import Conflict as JobConflict
from jobs.models import Job
from jobs.runner import JobContext, JobFailed
from jobs.services import job_start

from .edits import Conflict
from .layers import layers_request
from .models import Collection, Question, Role
from .permissions import require_role
from .selectors import question_list_queryset

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

# a request for at most this many questions is made in the request (well under a second)
INLINE_QUESTIONS = 300

RUN_LAYERS_REQUEST = "annotate.layer_jobs.run_layers_request"


def layers_selection(collection: Collection, filters: dict[str, str]) -> QuerySet[Question]:
    """The questions the request's filters (the question list's: status, assessor,
    unjudged, a search in qid and text) choose."""
    return question_list_queryset(
        collection,
        status=filters.get("status", ""),
        assessor=filters.get("assessor", ""),
        unjudged=filters.get("unjudged", ""),
        search=filters.get("search", ""),
    ).only("pk", "qid", "collection_id")


def _listed(names: list[str]) -> str:
    return ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")


def run_layers_request(ctx: JobContext) -> dict[str, Any]:
    """The job of a layer request (``params``: assessors and adjudicator ids, filters, k,
    sample, seed).  Its result's ``success`` and ``warnings`` are what the agreement page
    says when it ran in the request."""
    p = ctx.params
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    try:
        require_role(ctx.job.user, collection, Role.ORGANIZER)
    except PermissionDenied:
        raise JobFailed(
            gettext("No layer was requested: you are no longer an organizer here.")
        ) from None
    ctx.progress.phase(gettext("Choosing the questions"))
    questions = list(layers_selection(collection, p.get("filters", {})))
    if not questions:
        raise JobFailed(gettext("No question matches the filters; nothing was requested."))
    users = get_user_model().objects
    assessors = list(users.filter(pk__in=p.get("assessors", [])).order_by("username"))
    adjudicator = users.filter(pk=p["adjudicator"]).first() if p.get("adjudicator") else None
    ctx.progress.phase(gettext("Requesting layers"), total=len(questions), unit="questions")
    try:
        done = layers_request(
            collection=collection,
            questions=questions,
            assessors=assessors,
            by=ctx.job.user,
            k=p.get("k", 2),
            sample=p.get("sample"),
            seed=p.get("seed", 0),
            adjudicator=adjudicator,
            progress=ctx.progress,
        )
    except Conflict as e:
        raise JobFailed(str(e)) from None
    success = ngettext(
        "%(layers)s layers requested on %(n)s question.",
        "%(layers)s layers requested on %(n)s questions.",
        done.questions,
    ) % {"layers": done.layers, "n": done.questions}
    warnings = []
    if done.layered:
        n = len(done.layered)
        warnings.append(
            ngettext(
                "%(n)s question left out: it has layers already, which stay as they are "
                "(more would make more than k): %(names)s.",
                "%(n)s questions left out: they have layers already, which stay as they are "
                "(more would make more than k): %(names)s.",
                n,
            )
            % {"n": n, "names": _listed(done.layered)}
        )
    if done.refused:
        n = len(done.refused)
        warnings.append(
            ngettext(
                "%(n)s question left out: gold was already derived from its layers, which "
                "more layers would not change: %(names)s.",
                "%(n)s questions left out: gold was already derived from their layers, which "
                "more layers would not change: %(names)s.",
                n,
            )
            % {"n": n, "names": _listed(done.refused)}
        )
    return {
        "message": " ".join([success, *warnings]),
        "success": success,
        "warnings": warnings,
        "url": reverse("annotate:collection-agreement", args=[collection.slug]),
        "link": gettext("Open the agreement page"),
    }


def layers_request_start(
    *, collection: Collection, user: AbstractBaseUser, params: dict[str, Any]
) -> Job:
    """Start a layer request: at once over a few hundred questions or fewer, else on a
    worker.  Raises ``JobRefused`` while a job that excludes it runs on the collection."""
    n = layers_selection(collection, params.get("filters", {})).count()
    if params.get("sample") is not None:
        n = max(0, min(n, params["sample"]))
    return job_start(
        kind="layers_request",
        label=ngettext(
            "Layer request on %(n)s question of %(collection)s",
            "Layer request on %(n)s questions of %(collection)s",
            n,
        )
        % {"n": n, "collection": collection.name},
        func=RUN_LAYERS_REQUEST,
        user=user,
        collection_id=collection.pk,
        conflict=JobConflict.SHARED,
        params=params,
        inline=n <= INLINE_QUESTIONS,
    )
