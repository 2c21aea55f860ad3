"""Security headers Django 5.2 does not set itself; the request size limit."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse


class ContentSecurityPolicyMiddleware:
    """Adds the Content-Security-Policy of ``settings.CONTENT_SECURITY_POLICY``: only our
    own static files run or style pages; no inline script, no plugins, no framing."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request):
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response.headers:
            response.headers["Content-Security-Policy"] = self.policy
        return response


class RequestSizeLimitMiddleware:
    """Refuses a request whose declared body (CONTENT_LENGTH) exceeds
    ``settings.MAX_REQUEST_BODY_BYTES`` with 413, before anything reads the body: an
    over-size upload is never spooled to disk, even one the CSRF check would refuse.
    Forms check the precise limits of each kind of file themselves."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.MAX_REQUEST_BODY_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit and length > limit:
            mb = 1024 * 1024
            body = (f"<!doctype html><title>Request too large</title><h1>Request too large"
                    f"</h1><p>The request is {length / mb:.1f} MB; uploads may be at most "
                    f"{limit // mb} MB.</p>")
            return HttpResponse(body, status=413)
        return self.get_response(request)
