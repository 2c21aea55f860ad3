"""Login with a limit on attempts (per client address and per username).

Every attempt is counted *before* the password is checked, with one atomic increment in
the shared cache, so parallel attempts cannot slip past the limit; a successful login gives
its attempt back.  The username is keyed the way authentication reads it (stripped, NFKC,
case-folded), so no other spelling of a locked name gets through.  Behind a reverse proxy
the client address comes from the header named by ``settings.CLIENT_IP_HEADER``.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import UsernameField
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

MAX_FAILURES = 5  # attempts allowed ...
WINDOW_SECONDS = 15 * 60  # ... per this window, per address and per username


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or, when ``settings.CLIENT_IP_HEADER`` names the
    header a trusted reverse proxy sets (``X-Forwarded-For``, ``X-Real-IP``), the address
    the proxy put there.  In a comma list the last entry is the one the proxy added (the
    ones before it are whatever the client sent)."""
    header = getattr(settings, "CLIENT_IP_HEADER", "")
    if header:
        value = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        address = value.split(",")[-1].strip()
        if address:
            return address[:64]
    return request.META.get("REMOTE_ADDR", "unknown")


def username_key(raw: str) -> str:
    """The throttling key of a submitted username: what authentication looks up (the
    login form strips and NFKC-normalises it), case-folded."""
    name = UsernameField().to_python(raw or "") or ""
    return name.casefold()[:150]


def _keys(request: HttpRequest) -> list[str]:
    keys = [f"login-fail:ip:{client_address(request)}"]
    username = username_key(request.POST.get("username", ""))
    if username:
        keys.append(f"login-fail:user:{username}")
    return keys


def count_attempt(key: str) -> int:
    """Add one to ``key``'s counter (created for WINDOW_SECONDS) and return the new value;
    atomic with a cache whose ``incr`` is (config.cache.DatabaseCache, memcached, redis)."""
    if cache.add(key, 1, WINDOW_SECONDS):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, WINDOW_SECONDS)
        return 1


class RateLimitedLoginView(auth_views.LoginView):
    """Django's LoginView; at most MAX_FAILURES attempts from one address or for one
    username are checked within WINDOW_SECONDS, further ones get 429 until the window
    passes.  A successful login clears its username's counter and does not count against
    its address."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # the address first: a locked address adds no username counters (which could
        # otherwise crowd the cache until it culls the counter of a locked username)
        locked = False
        for key in _keys(request):
            if count_attempt(key) > MAX_FAILURES:
                locked = True
                break
        if locked:
            context = {
                **self.get_context_data(form=self.get_form()),
                "locked": True,
                "minutes": WINDOW_SECONDS // 60,
            }
            return TemplateResponse(
                request, self.template_name or "registration/login.html", context, status=429
            )
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        keys = _keys(self.request)
        try:
            cache.decr(keys[0])
        except ValueError:
            pass
        user = username_key(form.get_user().get_username())
        cache.delete_many([*keys[1:], f"login-fail:user:{user}"])
        return super().form_valid(form)
