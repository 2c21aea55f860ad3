"""Personal API tokens (DESIGN.md section 11).

A token is shown once, when it is created; the database keeps only its SHA-256 digest and a
short visible prefix (to tell tokens apart on the user's page).  A revoked token stays in
the list, marked revoked, and never authenticates again.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

TOKEN_PREFIX = "qas_"
PREFIX_LENGTH = len(TOKEN_PREFIX) + 8  # "qas_" and the first 8 characters of the secret


def token_digest(token: str) -> str:
    """The stored form of a token: its SHA-256 in hex (a 256-bit random secret needs no
    slow hash: it cannot be guessed from its digest)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh token: ``qas_`` and 43 URL-safe characters (256 random bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(
        _("name"), max_length=100, help_text=_("what the token is for, e.g. 'CI'")
    )
    prefix = models.CharField(max_length=PREFIX_LENGTH, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(digest=""), name="api_token_digest_set"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
