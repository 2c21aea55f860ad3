"""Security headers Django 5.2 does not set itself."""

from __future__ import annotations

from django.conf import settings


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
