"""Who may see and do what in the evaluation app, written once for the pages, the API and
the services (which enforce the write rules themselves, whoever calls them): the roles
that see scores and runs, the run a user may see, who may submit a run to a collection,
who may withdraw or replace one."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotate.models import Collection, Role
from annotate.permissions import collection_role, require_role

from .models import Run

# scores and runs are for organizers and participants; assessors judge blind
SCORE_ROLES = (Role.ORGANIZER, Role.PARTICIPANT)
NOT_OPEN = _("This collection is not open for submissions.")
NOT_A_SUBMITTER = _("Only the collection's organizers and participants may submit runs to it.")
MAY_NOT_CHANGE = _(
    "Only the run's owner while the collection is open for submissions, or an organizer, "
    "may change this run."
)


def score_access(request_or_user: Any, slug: str) -> tuple[Collection, Role]:
    """The collection ``slug`` and the user's role in it, when it is a role that sees
    scores and runs (``SCORE_ROLES``): Http404 for no such collection, PermissionDenied
    (403) for an assessor or a non-member.  Takes the request (views) or a user."""
    collection = get_object_or_404(Collection, slug=slug)
    return collection, require_role(request_or_user, collection, *SCORE_ROLES)


def visible_run(*, user: Any, collection: Collection, run_id: int | str) -> Run:
    """The run ``run_id`` of ``collection`` (with its owner) if ``user`` may see it;
    PermissionDenied (403) when it exists but is hidden from them, Http404 when it does not
    exist or was withdrawn."""
    run = Run.objects.visible_to(user, collection).select_related("owner").filter(pk=run_id).first()
    if run is None:
        if Run.objects.active().filter(collection=collection, pk=run_id).exists():
            raise PermissionDenied(gettext("This run is not visible to you."))
        raise Http404(gettext("No such run"))
    return run


def may_submit(user: Any, collection: Collection) -> bool:
    """Whether ``user`` may submit a run to ``collection``: its organizers (and site
    staff) always, its participants while it is open for submissions."""
    role = collection_role(user, collection)
    return role == Role.ORGANIZER or (role == Role.PARTICIPANT and collection.open_for_submissions)


def require_may_submit(user: Any, collection: Collection) -> None:
    """``may_submit``, or PermissionDenied saying why not."""
    if may_submit(user, collection):
        return
    if collection_role(user, collection) == Role.PARTICIPANT:
        raise PermissionDenied(NOT_OPEN)
    raise PermissionDenied(NOT_A_SUBMITTER)


def run_may_change(run: Run, user: Any) -> bool:
    """Whether ``user`` may withdraw or replace ``run``: organizers of its collection (and
    site staff) always, its owner while the collection is open for submissions."""
    if run.withdrawn_at is not None or not user.is_authenticated:
        return False
    role = collection_role(user, run.collection)
    if role == Role.ORGANIZER:
        return True
    return (
        role == Role.PARTICIPANT and run.owner_id == user.pk and run.collection.open_for_submissions
    )


def require_may_change(run: Run, user: Any) -> None:
    """``run_may_change``, or PermissionDenied saying why not."""
    if run.withdrawn_at is not None:
        raise PermissionDenied(gettext("This run has been withdrawn."))
    if not run_may_change(run, user):
        raise PermissionDenied(MAY_NOT_CHANGE)
