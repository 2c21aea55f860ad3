"""Per-collection roles: organizer, assessor, participant.  Staff act as organizers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from .models import Membership, Role, is_site_staff

ORGANIZER, ASSESSOR, PARTICIPANT = Role.ORGANIZER.value, Role.ASSESSOR.value, Role.PARTICIPANT.value


def collection_role(user, collection) -> str | None:
    """The role of ``user`` in ``collection`` (None for a non-member or anonymous user)."""
    if not user.is_authenticated:
        return None
    if is_site_staff(user):
        return ORGANIZER
    # memoized on the user object, which lives for one request: a page asking several times
    # costs one query per collection
    cache = getattr(user, "_collection_roles", None)
    if cache is None:
        cache = user._collection_roles = {}
    if collection.pk not in cache:
        cache[collection.pk] = (Membership.objects.filter(collection=collection, user=user)
                                .values_list("role", flat=True).first())
    return cache[collection.pk]


def require_role(request_or_user, collection, *roles: str) -> str:
    """Return the user's role in ``collection`` if it is one of ``roles`` (any role when none
    are given); otherwise raise PermissionDenied, which Django answers with 403.

    Takes the request (views) or a user (services, tests)."""
    user = getattr(request_or_user, "user", request_or_user)
    role = collection_role(user, collection)
    if role is None or (roles and role not in roles):
        raise PermissionDenied("You do not have access to this page of this collection.")
    return role

