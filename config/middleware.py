"""Security headers Django 5.2 does not set itself; the request size limit; refusal of
control characters; the app's 404 page with DEBUG on."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed, SuspiciousOperation
from django.http import Http404, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404, get_resolver, resolve
from django.utils import translation

from config.text import CONTROL_CHARACTERS

API_PREFIX = "/api/"


def _for_api(request) -> bool:
    """A request to the REST API, which answers JSON, errors included."""
    return request.path_info.startswith(API_PREFIX)


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


class LanguageScopeMiddleware:
    """First of all: the language a request's page is in (``LocaleMiddleware`` and
    ``annotate.language`` activate it for the thread) ends with the request, so whatever
    the thread does next (another request's checks before LocaleMiddleware, a service
    called outside any request, a test) is not in this request's language."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        previous = translation.get_language()
        try:
            return self.get_response(request)
        finally:
            translation.activate(previous) if previous else translation.deactivate()


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
            length = int(request.headers.get("content-length") or 0)
        except ValueError:
            length = 0
        if limit and length > limit:
            mb = 1024 * 1024
            if _for_api(request):
                return JsonResponse(
                    {
                        "detail": f"The request is {length / mb:.1f} MB; uploads "
                        f"may be at most {limit // mb} MB."
                    },
                    status=413,
                )
            # rendered without the request: no session or user exists yet at this point; in
            # the language of the cookie or the browser (LocaleMiddleware has not run yet)
            with translation.override(translation.get_language_from_request(request)):
                body = loader.get_template("413.html").render(
                    {"size_mb": length / mb, "limit_mb": limit // mb}
                )
                return HttpResponse(
                    body, status=413, headers={"Content-Language": translation.get_language()}
                )
        return self.get_response(request)


def _control_character_field(request) -> str | None:
    """The name of the first part of ``request`` (its path, a query parameter or form field,
    name or value) holding a refused control character.  Uploaded files are not looked at:
    Django drops non-printable characters from their names, and their parsers check their
    contents line by line."""
    if CONTROL_CHARACTERS.search(request.path_info):
        return "the address"
    parts = [request.GET]
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        try:
            parts.append(request.POST)
        except (SuspiciousOperation, MultiPartParserError):
            return None  # a body Django cannot parse: the view refuses it as it always did
    for part in parts:
        for name, values in part.lists():
            if CONTROL_CHARACTERS.search(name) or any(CONTROL_CHARACTERS.search(v) for v in values):
                return name
    return None


class ControlCharacterMiddleware:
    """Answers 400 to a request whose address, query parameters or form fields (names and
    values) hold a control character other than tab, newline and carriage return, and
    ignores a cookie holding one: no view ever sees one, so none reaches the database.
    Placed before the session middleware, which reads the session cookie."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # a cookie holding one (a session key with a NUL byte would fail in the database)
        # is dropped, so the browser gets a fresh one instead of an error on every page
        if any(CONTROL_CHARACTERS.search(v) for v in request.COOKIES.values()):
            request.COOKIES = {
                k: v for k, v in request.COOKIES.items() if not CONTROL_CHARACTERS.search(v)
            }
        field = _control_character_field(request)
        if field is not None and _for_api(request):
            # the shape of the API's other 400s (docs/api.md): a detail and the errors,
            # each with its file (an upload's name), line and message
            try:
                upload = request.FILES.get("file") if request.method == "POST" else None
            except (SuspiciousOperation, MultiPartParserError):
                upload = None
            message = (
                f"{field[:60]}: holds a control character (such as a NUL byte); only tab, "
                "newline and carriage return are allowed in text"
            )
            return JsonResponse(
                {
                    "detail": f"{field[:60]!r} holds a control character (such "
                    "as a NUL byte); only tab, newline and carriage "
                    "return are allowed in text.",
                    "errors": [
                        {"file": getattr(upload, "name", ""), "line": None, "message": message}
                    ],
                },
                status=400,
            )
        if field is not None:
            return render(
                request,
                "400.html",
                {
                    "reason": f"{field[:60]!r} holds a control character (such as a NUL byte); "
                    "only tab, newline and carriage return are allowed in text."
                    if field != "the address"
                    else "The address holds a control character (such as a NUL byte)."
                },
                status=400,
            )
        return self.get_response(request)


class DebugNotFoundMiddleware:
    """With DEBUG on (``make demo``), a missing page answers the app's 404 page, as with
    DEBUG off, instead of Django's technical 404 page: that page's inline styles are
    blocked by the Content-Security-Policy, so it showed unstyled.  DEBUG's other pages
    (the technical 500 page among them) are kept.  Not used with DEBUG off, where Django
    renders the 404 page itself.

    Django chooses the technical page for an ``Http404`` raised before any middleware can
    answer (no URL matches) or by a view: the first is caught by resolving the address
    here, the second in ``process_exception``.  Placed after CommonMiddleware, which still
    redirects an address missing its final slash."""

    def __init__(self, get_response):
        if not settings.DEBUG:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        if not _for_api(request):
            try:
                resolve(request.path_info, getattr(request, "urlconf", None))
            except Resolver404 as exc:
                return self._not_found(request, exc)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, Http404) and not _for_api(request):
            return self._not_found(request, exception)
        return None

    @staticmethod
    def _not_found(request, exception: Http404) -> HttpResponse:
        handler = get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(404)
        return handler(request, exception=exception)
