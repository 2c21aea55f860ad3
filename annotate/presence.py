"""Who else has the judging page of a question open: a lightweight presence kept in the
shared cache (one entry per question: username -> when last seen).  Every render of the
workspace records the user (written at most once a minute per user, so a page read costs
one cache read) and returns the other users seen in the last ``WINDOW``.  Lost updates
between two simultaneous writers only delay a notice by a minute; nothing depends on it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db import DatabaseError
from django.utils import timezone

logger = logging.getLogger(__name__)
WINDOW = timedelta(minutes=10)
REFRESH = timedelta(minutes=1)


@dataclass(frozen=True)
class Seen:
    username: str
    at: datetime

    @property
    def minutes_ago(self) -> int:
        return int((timezone.now() - self.at).total_seconds() // 60)


def _key(question_id: int) -> str:
    return f"judge-presence:{question_id}"


def seen_on_question(question_id: int, username: str, *, now: datetime | None = None) -> list[Seen]:
    """Record ``username`` on the question and return the others seen on it within
    ``WINDOW``, most recent first."""
    now = now or timezone.now()
    try:
        return _seen(question_id, username, now)
    except DatabaseError:  # no cache table, say: the page works without the notice
        logger.warning("judging presence unavailable", exc_info=True)
        return []


def _seen(question_id: int, username: str, now: datetime) -> list[Seen]:
    entries: dict[str, datetime] = cache.get(_key(question_id)) or {}
    fresh = {u: t for u, t in entries.items() if now - t <= WINDOW}
    mine = fresh.get(username)
    if username and (mine is None or now - mine >= REFRESH or len(fresh) != len(entries)):
        fresh[username] = now
        cache.set(_key(question_id), fresh, timeout=int(WINDOW.total_seconds()))
    return sorted(
        (Seen(u, t) for u, t in fresh.items() if u != username), key=lambda s: s.at, reverse=True
    )
