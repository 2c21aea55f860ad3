"""Organizer writes: a collection and its levels saved, members and their roles,
invitations of new members, questions assigned to assessors.  Keyword-only, one
transaction, one ``JudgmentEvent`` each (as ``annotate.edits`` says).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.db.models import (
    Exists,
    F,
    OuterRef,
)
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext

from evaluation.metrics.gains import check_gain

from .adjudication import question_layers_to_gold
from .edits import Conflict, collection_judgments_changed
from .layer_state import layers_complete
from .models import (
    DEFAULT_LEVELS,
    JUDGE_ROLES,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    Level,
    LevelRow,
    Membership,
    Question,
    Role,
    is_site_staff,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from .edits import AnyUser


# -- organizer writes -------------------------------------------------------------------------
@transaction.atomic
def questions_assign(
    *,
    collection: Collection,
    questions: Sequence[Question],
    assessors: Iterable[AbstractBaseUser],
    by: AnyUser | None,
    round_robin: bool = True,
    replace: bool = True,
) -> int:
    """Assign ``questions`` to ``assessors`` (members of the collection): round-robin gives
    each question one assessor in turn, otherwise each gets all of them; ``replace`` drops
    the current assignments first -- but not those of the assessors who judge a question
    in a layer (DESIGN.md section 9): it stays in their queue.  Returns the number of
    questions changed."""
    assessors = list(assessors)
    members = set(
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES).values_list(
            "user_id", flat=True
        )
    )
    strangers = [u.get_username() for u in assessors if u.pk not in members]
    if strangers:
        raise Conflict(
            gettext("Not an assessor of this collection: %(names)s.")
            % {"names": ", ".join(strangers)}
        )
    if not assessors:
        raise Conflict(gettext("Choose at least one assessor."))
    questions = [q for q in questions if q.collection_id == collection.pk]
    through = Question.assessors.through
    ids = [q.pk for q in questions]
    if replace:
        layer = JudgingLayer.objects.filter(
            question_id=OuterRef("question_id"), assessor_id=OuterRef("user_id")
        )
        through.objects.filter(question_id__in=ids).exclude(Exists(layer)).delete()
    links = []
    for i, q in enumerate(questions):
        chosen = [assessors[i % len(assessors)]] if round_robin else assessors
        links += [through(question_id=q.pk, user_id=u.pk) for u in chosen]
    through.objects.bulk_create(links, ignore_conflicts=True)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="questions_assign",
        after={
            "questions": len(ids),
            "assessors": [u.get_username() for u in assessors],
            "round_robin": round_robin,
            "replace": replace,
        },
    )
    return len(ids)


def _levels_set(collection: Collection, levels: list[LevelRow]) -> None:
    """Give ``collection`` exactly ``levels`` (highest first), keeping the rows of the codes
    that stay; Conflict when none is given, a gain is out of range or a level to remove is
    still used by a judged string or a layer judgment."""
    if not levels:
        raise Conflict(gettext("A collection needs at least one level."))
    for code, _, gain, _ in levels:
        try:
            check_gain(gain, gettext("the gain of level %(code)s") % {"code": repr(code)})
        except ValueError as e:
            raise Conflict(str(e)) from e
    existing = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
    keep = {lv.code for lv in levels}
    gone = [lv for code, lv in existing.items() if code not in keep]
    used = [lv.code for lv in gone if lv.strings.exists() or lv.layer_judgments.exists()]
    if used:
        raise Conflict(
            gettext("Level(s) %(codes)s are used by judged strings; change those strings first.")
            % {"codes": ", ".join(used)}
        )
    Level.objects.filter(pk__in=[lv.pk for lv in gone]).delete()
    Level.objects.filter(collection=collection).update(order=F("order") + 1000)
    for order, lv in enumerate(levels):
        Level.objects.update_or_create(
            collection=collection,
            code=lv.code,
            defaults={
                "label": lv.label,
                "gain": lv.gain,
                "examples": lv.examples,
                "order": order,
            },
        )
    collection_judgments_changed(collection_id=collection.pk)


@transaction.atomic
def collection_save(
    *,
    collection: Collection,
    levels: Sequence[LevelRow | tuple[str, str, float]] | None,
    by: AnyUser | None,
) -> Collection:
    """Create or update ``collection`` (an unsaved or changed instance) and set its levels
    (code, label, gain and optional examples; highest first).  A new collection gets S/A/B
    3/2/1 unless levels are given, and its creator becomes an organizer.  A level still used
    by a string cannot be removed (Conflict).  The matching mode of an existing collection
    is not changed here (Conflict): it re-keys the runs' answers too, so the evaluation
    app's ``collection_matching_mode_change`` changes it."""
    created = collection.pk is None
    if not created:
        old_mode = (
            Collection.objects.filter(pk=collection.pk)
            .values_list("matching_mode", flat=True)
            .get()
        )
        if old_mode != collection.matching_mode:
            raise Conflict(
                gettext(
                    "The matching mode is changed on the collection's Matching mode page, "
                    "which re-keys its strings and its runs' answers together."
                )
            )
    collection.save()
    if created and not levels:
        levels = DEFAULT_LEVELS
    if levels is not None:
        levels = [LevelRow(*lv) for lv in levels]
        _levels_set(collection, levels)
    user = by if by is not None and by.is_authenticated else None
    if created and user is not None and not is_site_staff(user):
        Membership.objects.get_or_create(
            collection=collection, user=user, defaults={"role": Role.ORGANIZER}
        )
    JudgmentEvent.objects.create(
        collection=collection,
        user=user,
        action="collection_create" if created else "collection_update",
        after={"name": collection.name, "levels": [list(lv) for lv in levels or ()]},
    )
    return collection


@transaction.atomic
def membership_set(
    *, collection: Collection, user: AbstractBaseUser, role: str | None, by: AnyUser | None
) -> None:
    """Give ``user`` ``role`` in ``collection``; ``role`` None removes the membership.

    A collection keeps at least one organizer: the last one can neither leave nor take
    another role (Conflict, nothing written).  A member who is no longer an organizer or
    assessor (removed, or made a participant) loses every question assignment of the
    collection, so their queue no longer lists its questions, and the layers they had not
    marked done (``_open_layers_remove``)."""
    if role is not None and role not in Role.values:
        raise Conflict(gettext("Unknown role %(role)s.") % {"role": repr(role)})
    # the organizer rows stay locked until the end: two organizers removing each other at
    # the same moment cannot both succeed and leave the collection without one
    organizers = set(
        Membership.objects.select_for_update()
        .filter(collection=collection, role=Role.ORGANIZER)
        .values_list("user_id", flat=True)
    )
    current = (
        Membership.objects.filter(collection=collection, user=user)
        .values_list("role", flat=True)
        .first()
    )
    if current == Role.ORGANIZER and role != Role.ORGANIZER and organizers == {user.pk}:
        raise Conflict(
            gettext(
                "%(name)s is the last organizer of “%(collection)s”: make another member an "
                "organizer first."
            )
            % {"name": user.get_username(), "collection": collection.name}
        )
    if role is None:
        Membership.objects.filter(collection=collection, user=user).delete()
    else:
        Membership.objects.update_or_create(
            collection=collection, user=user, defaults={"role": role}
        )
    dropped, layers_removed = 0, 0
    if role not in JUDGE_ROLES:
        dropped, _ = Question.assessors.through.objects.filter(
            question__collection=collection, user=user
        ).delete()
        layers_removed = _open_layers_remove(collection=collection, user=user, by=by)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="membership_set",
        after={
            "user": user.get_username(),
            "role": role,
            "assignments_dropped": dropped,
            "layers_removed": layers_removed,
        },
    )


def _open_layers_remove(
    *, collection: Collection, user: AbstractBaseUser, by: AnyUser | None
) -> int:
    """Remove the layers ``user`` has not marked done in ``collection`` (they no longer
    judge there: an open layer would keep its question from agreement forever), each with a
    ``layer_remove`` event on its question that records its judgments; their done layers
    stay, as judgments made.  A question whose remaining layers are all done and as many as
    its request's k then goes through the agreement step, as when its last layer is marked
    done (``adjudication.question_layers_to_gold``); with fewer it waits for another layer.
    Returns the number of layers removed."""
    questions = set(
        JudgingLayer.objects.filter(
            question__collection=collection, assessor=user, done_at__isnull=True
        ).values_list("question_id", flat=True)
    )
    if not questions:
        return 0
    # the questions, then every layer of them, locked in one order (as layer_mark_done
    # does): an assessor marking theirs done meanwhile either commits first (and is seen
    # done below) or waits, then sees these gone
    list(
        Question.objects.select_for_update(no_key=True)
        .filter(pk__in=questions)
        .order_by("pk")
        .values("pk")
    )
    every = list(
        JudgingLayer.objects.select_for_update(of=("self",))
        .filter(question_id__in=questions)
        .order_by("pk")
    )
    name, who = user.get_username(), by if by is not None and by.is_authenticated else None
    removed = [la for la in every if la.assessor_id == user.pk and la.done_at is None]
    for layer in removed:
        rows = {
            str(string): [group, level]
            for string, group, level in layer.judgments.values_list(
                "string_id", "group", "level_id"
            )
        }
        JudgmentEvent.objects.create(
            collection=collection,
            question_id=layer.question_id,
            user=who,
            action="layer_remove",
            before={
                "assessor": name,
                "judgments": len(rows),
                "rows": rows,
                "started_at": layer.started_at.isoformat() if layer.started_at else None,
                "layer_events": layer.events.count(),
            },
            after={
                "assessor": name,
                "judgments": len(rows),
                "reason": "no longer an assessor of the collection",
            },
        )
        layer.delete()
    for q in sorted(questions):
        # fewer layers than asked for wait for another one (``layers_request`` tops the
        # question up): one assessor's layer alone is no independent judgment
        if layers_complete(q):
            question_layers_to_gold(question=q, by=by)
    return len(removed)


# -- accounts for new members -------------------------------------------------------------
@dataclass
class Invitation:
    """A new account and the one-time link on which its owner sets a password."""

    user: object
    uidb64: str
    token: str


@transaction.atomic
def member_invite(
    *, collection: Collection, username: str, role: str, by: AnyUser | None, email: str = ""
) -> Invitation:
    """Create an account for a new member of ``collection`` (no password yet) with
    ``role``, and the token of the link on which they choose their password (Django's
    password-reset token: valid for ``PASSWORD_RESET_TIMEOUT``, and spent once a password is
    set).  Refuses (Conflict) a username that is taken."""
    User = get_user_model()
    username = username.strip()
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict(
            gettext(
                "The username %(name)s is taken: add that user as a member instead, or "
                "choose another name."
            )
            % {"name": repr(username)}
        )
    user = User(username=username, email=email.strip())
    user.set_unusable_password()
    user.save()
    membership_set(collection=collection, user=user, role=role, by=by)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="member_invite",
        after={"user": username, "role": role},
    )
    return Invitation(
        user=user,
        uidb64=urlsafe_base64_encode(force_bytes(user.pk)),
        token=default_token_generator.make_token(user),
    )
