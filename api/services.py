"""Writes of the API app: creating and revoking tokens (STYLE.md habit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .models import ApiToken, new_token, token_digest

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


# the most tokens a user may hold at once (revoked ones do not count): the rate limit is
# per user, and a token per CI job is still plenty
MAX_ACTIVE_TOKENS = 10


class TooManyTokens(Exception):
    """The user already holds MAX_ACTIVE_TOKENS active tokens; the message says so."""


@dataclass(frozen=True)
class NewToken:
    """A token just created: the stored row and the secret, which is never shown again."""

    token: ApiToken
    secret: str


@transaction.atomic
def api_token_create(*, user: AbstractBaseUser, name: str) -> NewToken:
    """Create a token for ``user``; returns the row and the secret (shown once).  Raises
    TooManyTokens when the user already holds MAX_ACTIVE_TOKENS active tokens (the user's
    row is locked first, so parallel creations cannot pass the cap together)."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_ACTIVE_TOKENS:
        raise TooManyTokens(
            _(
                "You already have %(max)s active tokens, the most one user may hold; "
                "revoke one you no longer use first."
            )
            % {"max": MAX_ACTIVE_TOKENS}
        )
    secret = new_token()
    token = ApiToken.objects.create(
        user=user,
        name=name.strip()[:100] or "token",
        prefix=secret[: len("qas_") + 8],
        digest=token_digest(secret),
    )
    return NewToken(token, secret)


@transaction.atomic
def api_token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke ``user``'s token ``token_id``; False when the user has no such token (another
    user's token is not theirs to revoke).  Revoking twice keeps the first time."""
    return (
        bool(
            ApiToken.objects.filter(user=user, pk=token_id, revoked_at__isnull=True).update(
                revoked_at=timezone.now()
            )
        )
        or ApiToken.objects.filter(user=user, pk=token_id).exists()
    )
