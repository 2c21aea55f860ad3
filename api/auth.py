"""Bearer-token authentication and the per-token rate limit of the API.

``Authorization: Bearer <token>``: the token's SHA-256 digest is looked up among the tokens
not revoked of active users; the request then acts as the token's user (``request.user``),
so every role rule of the pages (``annotate.permissions``, ``Run.objects.visible_to``)
applies unchanged.  Requests are counted per token in fixed windows with one atomic
increment in the shared cache (``config.auth.count_attempt``, as the login throttle), so
every worker sees the same count; over the limit the API answers 429 with Retry-After.
"""

from __future__ import annotations

import time
from datetime import timedelta
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from ninja.security import HttpBearer
from ninja.throttling import BaseThrottle

from .models import TOKEN_PREFIX, ApiToken, token_digest

# last_used_at is written at most this often per token (not one write per request)
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenAuth(HttpBearer):
    """Authenticates ``Authorization: Bearer qas_...``; answers 401 otherwise."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        found = (
            ApiToken.objects.active()
            .select_related("user")
            .filter(digest=token_digest(token))
            .first()
        )
        if found is None:
            return None
        now = timezone.now()
        if found.last_used_at is None or now - found.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        request.user = found.user
        return found


def docs_access(view):
    """The schema and the docs page: for a logged-in browser (others are sent to the login
    page) or a request with a valid token (a client generator fetching
    ``/api/openapi.json``; without one it gets 401 like the endpoints)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_authenticated:
            scheme, _, token = request.headers.get("Authorization", "").partition(" ")
            if not (
                scheme.lower() == "bearer" and TokenAuth().authenticate(request, token.strip())
            ):
                if request.path_info.endswith(".json"):
                    return JsonResponse({"detail": "Unauthorized"}, status=401)
                return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    wrapper.login_required = False  # checked here, not by LoginRequiredMiddleware
    return wrapper


def parse_rate(rate: str) -> tuple[int, int]:
    """``"120/min"`` -> (120, 60); units s, min, h, day."""
    count, _, unit = rate.partition("/")
    seconds = {
        "s": 1,
        "sec": 1,
        "m": 60,
        "min": 60,
        "h": 3600,
        "hour": 3600,
        "d": 86400,
        "day": 86400,
    }[unit.strip() or "min"]
    return int(count), seconds


class TokenRateThrottle(BaseThrottle):
    """At most ``settings.API_RATE`` requests per token and window (fixed windows)."""

    def allow_request(self, request: HttpRequest) -> bool:
        token = getattr(request, "auth", None)
        if not isinstance(token, ApiToken):
            return True  # refused by authentication anyway
        limit, window = parse_rate(settings.API_RATE)
        start = int(time.time() // window) * window
        key = f"api-rate:{token.pk}:{start}"
        if cache.add(key, 1, window + 1):
            return True
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, window + 1)
            return True
        return count <= limit

    def wait(self) -> float | None:
        """Seconds until the current window ends (the Retry-After of a 429)."""
        _, window = parse_rate(settings.API_RATE)
        return max(1.0, window - time.time() % window)
