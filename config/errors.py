"""The error page of uncaught exceptions: 503 when the database did not answer in time.

A statement cancelled by ``statement_timeout``, a lock not granted within ``lock_timeout``
(both set in settings) or a database that cannot be reached is not a bug of the page but a
busy or unavailable service: the client gets a short 503 page with Retry-After, rendered
without the database (no user, no session), so it can always be shown.  The 500 page is
rendered the same way.  Both extend ``templates/base_minimal.html``, the site's layout
without the database (top bar, static menu, stylesheet, footer), which ``base.html`` builds
every other page on: the error pages look like the rest of the site.
"""

from __future__ import annotations

import sys

from django.db import DatabaseError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.template import loader
from django.views.decorators.csrf import requires_csrf_token

RETRY_AFTER_SECONDS = 30


def is_database_unavailable(exc: BaseException | None) -> bool:
    """True for a timed-out statement, a lock wait given up, or no connection."""
    if isinstance(exc, OperationalError):
        return True
    # psycopg's QueryCanceled and LockNotAvailable are OperationalErrors; Django may wrap
    # them as a DatabaseError subclass, so look at the cause too
    cause = getattr(exc, "__cause__", None)
    return isinstance(exc, DatabaseError) and getattr(cause, "sqlstate", None) in {
        "57014",
        "55P03",
        "57P01",
        "57P03",
        "08000",
        "08001",
        "08003",
        "08004",
        "08006",
    }


def database_unavailable_response() -> HttpResponse:
    body = loader.get_template("503.html").render({"retry_after": RETRY_AFTER_SECONDS})
    return HttpResponse(body, status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: Django calls it while handling the exception."""
    if is_database_unavailable(sys.exc_info()[1]):
        return database_unavailable_response()
    body = loader.get_template("500.html").render()
    return HttpResponseServerError(body)
