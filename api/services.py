"""Writes of the API app: creating and revoking tokens (STYLE.md habit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from .models import ApiToken, new_token, token_digest

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@dataclass(frozen=True)
class NewToken:
    """A token just created: the stored row and the secret, which is never shown again."""

    token: ApiToken
    secret: str


@transaction.atomic
def api_token_create(*, user: AbstractBaseUser, name: str) -> NewToken:
    """Create a token for ``user``; returns the row and the secret (shown once)."""
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
