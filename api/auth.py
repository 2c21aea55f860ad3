"""Bearer-token authentication and the rate limits of the API.

``Authorization: Bearer <token>``: the token's SHA-256 digest is looked up among the tokens
not revoked of active users; the request then acts as the token's user (``request.user``),
so every role rule of the pages (``annotate.permissions``, ``Run.objects.visible_to``)
applies unchanged.

Two limits, both counted in fixed windows with one atomic increment in the shared cache
(``config.auth.count_attempt``, as the login throttle), so every worker sees the same
count, and both answered with 429 and Retry-After (seconds to the window's end):

- requests per *user* (``settings.API_RATE``): all of a user's tokens share one count, so
  more tokens give no more requests;
- failed authentications (no token, a malformed, unknown or revoked one) per client
  address (``config.auth.client_address``): past ``MAX_AUTH_FAILURES`` in
  ``AUTH_FAILURE_WINDOW`` seconds, every request from that address *without a valid
  token* is answered 429 until the window ends.  A valid token is always accepted (a
  script retrying a revoked token must not lock out every other client behind the same
  address), so a request carrying a well-formed token is still looked up (one indexed
  query); one without a token, or with a malformed one, is refused without a query.
"""

from __future__ import annotations

import math
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

from config.auth import WINDOW_SECONDS, client_address, count_attempt

from .models import TOKEN_PREFIX, ApiToken, token_digest

# last_used_at is written at most this often per token (not one write per request)
LAST_USED_RESOLUTION = timedelta(minutes=1)
# failed authentications allowed per client address and window (a script with a revoked
# token retrying, not a guesser: a 256-bit token cannot be guessed, but every guess costs
# a query)
MAX_AUTH_FAILURES = 20
AUTH_FAILURE_WINDOW = WINDOW_SECONDS  # 15 minutes: the life of count_attempt's counters


class AuthFailuresThrottled(Exception):
    """Too many failed authentications from one client address: answered 429 with
    Retry-After ``wait`` seconds (``endpoints``, ``docs_access``)."""

    def __init__(self, wait: int):
        self.wait = wait
        super().__init__(
            "Too many failed authentications from your address; "
            f"try again in {max(1, round(wait / 60))} minute(s)."
        )


def _window(seconds: int) -> tuple[int, int]:
    """(start of the current fixed window of ``seconds``, seconds until it ends)."""
    now = time.time()
    start = int(now // seconds) * seconds
    return start, max(1, math.ceil(start + seconds - now))


class TokenAuth(HttpBearer):
    """Authenticates ``Authorization: Bearer qas_...``; answers 401 otherwise, and 429
    (AuthFailuresThrottled) to a request without a valid token from an address past
    MAX_AUTH_FAILURES failures."""

    def __call__(self, request: HttpRequest) -> ApiToken | None:
        found = super().__call__(request)  # None without a bearer token
        if found is not None:
            return found
        start, wait = _window(AUTH_FAILURE_WINDOW)
        key = f"api-auth-fail:ip:{client_address(request)}:{start}"
        # past the limit a failure is not counted any more (the answer is 429 anyway)
        if (cache.get(key) or 0) >= MAX_AUTH_FAILURES or count_attempt(
            key, AUTH_FAILURE_WINDOW
        ) > MAX_AUTH_FAILURES:
            raise AuthFailuresThrottled(wait)
        return None

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
            try:
                token = TokenAuth()(request) if "Authorization" in request.headers else None
            except AuthFailuresThrottled as e:
                response = JsonResponse({"detail": str(e)}, status=429)
                response["Retry-After"] = str(e.wait)
                return response
            if token is None:
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


class UserRateThrottle(BaseThrottle):
    """At most ``settings.API_RATE`` requests per user and window (fixed windows), whichever
    of the user's tokens sends them."""

    def allow_request(self, request: HttpRequest) -> bool:
        token = getattr(request, "auth", None)
        if not isinstance(token, ApiToken):
            return True  # refused by authentication anyway
        limit, window = parse_rate(settings.API_RATE)
        start, _ = _window(window)
        key = f"api-rate:user:{token.user_id}:{start}"
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
