"""``/api/``: the REST API (token authentication, not the login page) and its docs."""

from functools import wraps

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponseNotAllowed, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from .endpoints import NOT_FOUND, api

app_name = "api"
METHOD_NOT_ALLOWED = "Method not allowed"


def json_not_allowed(view):
    """``view`` (a ninja path view), with its 405 (ninja's is text/html) as the JSON of
    every other API error, its Allow header kept."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            refused = JsonResponse({"detail": METHOD_NOT_ALLOWED}, status=405)
            refused["Allow"] = response["Allow"]
            return refused
        return response

    return wrapper


@csrf_exempt
@login_not_required
def not_found(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
    """A path under /api/ that is no endpoint, the root included: a script gets the JSON
    404 of the endpoints, not the site's HTML page nor the login page."""
    return JsonResponse({"detail": NOT_FOUND}, status=404)


def _patterns():
    """The API's patterns; the endpoints answer 401 themselves, so they are exempt from
    LoginRequiredMiddleware (which would send a script to the login page); so are the
    schema and the docs page, which take a session or a token (``auth.docs_access``).
    Ninja's root pattern (reversed by ninja for the schema's paths) answers the JSON 404,
    and so does every other path under /api/ that is no endpoint; a method an endpoint
    does not take is the JSON 405."""
    patterns, _, _ = api.urls
    out = []
    for p in patterns:
        if p.name == "api-root":
            out.append(path(str(p.pattern), not_found, name=p.name))
        else:
            view = json_not_allowed(p.callback)
            view.login_required = False
            out.append(path(str(p.pattern), view, name=p.name))
    return [*out, path("<path:rest>", not_found, name="not-found")]


urlpatterns = _patterns()
