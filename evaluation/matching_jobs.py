"""A collection's matching-mode change as a background job (issue 24; DESIGN.md section
4): ``services.collection_matching_mode_change`` re-keys every string and every run answer
in one transaction, which at campaign size takes longer than a web request may.  The job
is exclusive (``Conflict.EXCLUSIVE``): it does not start while another job (an upload, an
import, pooling) runs on the collection, and none of those starts while it runs.  A small
collection's change runs at once in the request (``INLINE_ROWS``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.translation import gettext as _

from annotate.edits import Conflict
from annotate.models import AnswerString, Collection, Role
from annotate.permissions import require_role
from jobs.models import Conflict as JobConflict
from jobs.models import Job
from jobs.runner import JobContext, JobFailed
from jobs.services import job_start

from . import services
from .models import RunAnswer

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

# a collection with fewer strings and run answers than this changes its mode in the
# request (well under a second); a larger one on a worker, its bar on the page
INLINE_ROWS = 10_000

RUN_MODE_CHANGE = "evaluation.matching_jobs.run_mode_change"


def run_mode_change(ctx: JobContext) -> dict[str, Any]:
    """The job of a matching-mode change (``params["mode"]``): the strings re-keyed (and
    folded where their spellings now share a key), then the run answers; or nothing written
    and every group of strings to judge alike first."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    try:
        require_role(ctx.job.user, collection, Role.ORGANIZER)
    except PermissionDenied:
        raise JobFailed(
            _("The matching mode was not changed: you are no longer an organizer here.")
        ) from None
    ctx.progress.phase(_("Re-keying the strings, then the run answers"), total=2, unit="steps")
    try:
        folded = services.collection_matching_mode_change(
            collection=collection, mode=ctx.params["mode"], by=ctx.job.user, progress=ctx.progress
        )
    except Conflict as e:  # MatchingModeConflict: every group to judge alike first
        raise JobFailed(str(e)) from None
    collection.refresh_from_db(fields=["matching_mode"])
    return {
        "message": (
            _("Matching mode: %(mode)s; %(folded)s string(s) folded into others.")
            if folded
            else _("Matching mode: %(mode)s.")
        )
        % {"mode": collection.get_matching_mode_display(), "folded": folded},
        "url": reverse("annotate:collection-detail", args=[collection.slug]),
        "link": _("Open the collection"),
        "folded": folded,
    }


def _small(collection: Collection) -> bool:
    """Fewer than ``INLINE_ROWS`` strings and run answers to re-key (counted no further)."""
    strings = AnswerString.objects.filter(question__collection=collection)
    answers = RunAnswer.objects.filter(run__collection=collection)
    n = strings[:INLINE_ROWS].count()
    return n < INLINE_ROWS and n + answers[: INLINE_ROWS - n].count() < INLINE_ROWS


def mode_change_start(*, collection: Collection, user: AbstractBaseUser, mode: str) -> Job:
    """Start the change of ``collection``'s matching mode to ``mode``, alone on the
    collection.  Raises ``JobRefused`` while any other job runs there."""
    return job_start(
        kind="matching_mode",
        label=_("Matching mode change of %(name)s to %(mode)s")
        % {"name": collection.name, "mode": mode},
        func=RUN_MODE_CHANGE,
        user=user,
        collection_id=collection.pk,
        conflict=JobConflict.EXCLUSIVE,
        params={"mode": mode},
        inline=_small(collection),
    )
