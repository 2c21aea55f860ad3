"""The two htmx decisions every page makes, written once: the whole page or only the
fragment htmx swaps, and how to send the browser elsewhere."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from django.template.response import TemplateResponse
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def render_page(
    request: HtmxHttpRequest,
    template_name: str,
    context: dict[str, Any],
    *,
    partial: str | None = None,
    status: int = 200,
) -> TemplateResponse:
    """The page, or only its ``{% partialdef partial %}`` for an htmx request that swaps it
    (a boosted link or form wants the whole page)."""
    if partial and request.htmx and not request.htmx.boosted:
        template_name += f"#{partial}"
    return TemplateResponse(request, template_name, context, status=status)


def redirect_to(request: HtmxHttpRequest, to: str, *args: Any, **kwargs: Any) -> HttpResponse:
    """Send the browser to ``to`` (a URL name with its arguments, or a URL): a 302, or for
    an htmx request ``HX-Redirect``, which makes htmx load the whole page there."""
    url = resolve_url(to, *args, **kwargs)
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)
