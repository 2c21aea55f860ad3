"""Per-collection roles (``Role``: organizer, assessor, participant).  Staff act as
organizers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext

from .models import (
    JUDGE_ROLES,
    Collection,
    LayerRequest,
    Membership,
    Question,
    Role,
    is_site_staff,
)


def collection_role(user, collection: Collection) -> Role | None:
    """The role of ``user`` in ``collection`` (None for a non-member or anonymous user)."""
    if not user.is_authenticated:
        return None
    if is_site_staff(user):
        return Role.ORGANIZER
    # memoized on the user object, which lives for one request: a page asking several times
    # costs one query per collection
    cache = getattr(user, "_collection_roles", None)
    if cache is None:
        cache = user._collection_roles = {}
    if collection.pk not in cache:
        role = (
            Membership.objects.filter(collection=collection, user=user)
            .values_list("role", flat=True)
            .first()
        )
        cache[collection.pk] = Role(role) if role is not None else None
    return cache[collection.pk]


def require_role(request_or_user, collection: Collection, *roles: Role) -> Role:
    """Return the user's role in ``collection`` if it is one of ``roles`` (any role when none
    are given); otherwise raise PermissionDenied, which Django answers with 403.

    Takes the request (views) or a user (services, tests)."""
    user = getattr(request_or_user, "user", request_or_user)
    role = collection_role(user, collection)
    if role is None or (roles and role not in roles):
        raise PermissionDenied(gettext("You do not have access to this page of this collection."))
    return role


def judge_access(request_or_user, question: Question) -> tuple[Role, bool]:
    """(role, may_write) on the judging workspace of ``question``: organizers and assessors
    see it (participants get 403); assessors write on questions assigned to them and on
    questions nobody is assigned to (their first change claims it) -- never on the gold of
    a question judged in layers (``gold_closed``)."""
    user = getattr(request_or_user, "user", request_or_user)
    role = require_role(user, question.collection, *JUDGE_ROLES)
    if role == Role.ORGANIZER:
        return role, True
    if gold_closed(question, role):
        return role, False
    assigned = set(question.assessors.values_list("pk", flat=True))
    return role, not assigned or user.pk in assigned


def gold_closed(question: Question, role: Role | None) -> bool:
    """Whether the gold of ``question`` is closed to a user of ``role`` on the judging
    workspace: a question judged in layers (it has a layer request, DESIGN.md section 9)
    gets its gold from the layers' agreement and from adjudication (the adjudication page),
    and on the judging workspace from organizers only -- an assessor judges it in their own
    layer, not in gold, whatever their assignments (made before the request, or by a bulk
    assignment since)."""
    return role != Role.ORGANIZER and LayerRequest.objects.filter(question=question).exists()


def can_create_collection(user) -> bool:
    """Site staff, users granted ``annotate.add_collection`` (by an administrator) and
    organizers of a collection may start a new collection; assessors and participants may
    not."""
    if not user.is_authenticated:
        return False
    if is_site_staff(user) or user.has_perm("annotate.add_collection"):
        return True
    return Membership.objects.filter(user=user, role=Role.ORGANIZER).exists()


def navigation_for(user) -> dict[str, bool]:
    """Which main-menu entries ``user`` can use, from their roles in all collections (one
    query): "My queue" for assessors and organizers, "Runs" for participants and organizers,
    "New collection" for those who may create one, "To adjudicate" for an organizer or a
    named adjudicator with questions waiting for them (``awaiting_adjudication``, as
    ``layer_selectors.adjudicator_questions`` lists them)."""
    if is_site_staff(user):
        return {
            "queue": True,
            "runs": True,
            "create": True,
            "admin": bool(user.is_staff),
            "adjudicate": False,  # staff find every question on the agreement pages
        }
    # the roles, and whether questions wait for adjudication in the collection (for an
    # organizer) or for the user as their named adjudicator (in a collection where they
    # judge), in the one query
    waiting = Question.objects.awaiting_adjudication().filter(
        collection_id=OuterRef("collection_id")
    )
    rows = set(
        Membership.objects.filter(user=user)
        .annotate(
            waiting=Exists(waiting),
            named=Exists(waiting.filter(layer_request__adjudicator=user)),
        )
        .values_list("role", "waiting", "named")
        .distinct()
    )
    roles = {role for role, _, _ in rows}
    organizer = Role.ORGANIZER in roles
    return {
        "adjudicate": any(
            (w and role == Role.ORGANIZER) or (named and role != Role.PARTICIPANT)
            for role, w, named in rows
        ),
        "queue": organizer or Role.ASSESSOR in roles,
        "runs": organizer or Role.PARTICIPANT in roles,
        "create": organizer or user.has_perm("annotate.add_collection"),
        "admin": False,
    }
