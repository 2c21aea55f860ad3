"""Login with a limit on failed attempts (per client address and per username)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

MAX_FAILURES = 5          # failed attempts allowed ...
WINDOW_SECONDS = 15 * 60  # ... per this window, per address and per username


def _client(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


def _keys(request: HttpRequest) -> list[str]:
    username = (request.POST.get("username") or "").strip().lower()[:150]
    keys = [f"login-fail:ip:{_client(request)}"]
    if username:
        keys.append(f"login-fail:user:{username}")
    return keys


class RateLimitedLoginView(auth_views.LoginView):
    """Django's LoginView; after MAX_FAILURES failed attempts from one address or for one
    username within WINDOW_SECONDS, further attempts get 429 until the window passes."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        keys = _keys(request)
        if any((cache.get(k) or 0) >= MAX_FAILURES for k in keys):
            context = {**self.get_context_data(form=self.get_form()), "locked": True,
                       "minutes": WINDOW_SECONDS // 60}
            return TemplateResponse(request, self.template_name or "registration/login.html",
                                    context, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        for key in _keys(self.request):
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, WINDOW_SECONDS)
        return super().form_invalid(form)

    def form_valid(self, form):
        cache.delete(f"login-fail:user:{form.get_user().get_username().lower()}")
        return super().form_valid(form)
