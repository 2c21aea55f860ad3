"""``/api/``: the REST API (token authentication, not the login page) and its docs."""

from .endpoints import api

app_name = "api"


def _patterns():
    """The API's patterns; the endpoints answer 401 themselves, so they are exempt from
    LoginRequiredMiddleware (which would send a script to the login page); so are the
    schema and the docs page, which take a session or a token (``auth.docs_access``).
    Ninja's root pattern, which only answers 404, stays behind the login."""
    patterns, _, _ = api.urls
    for p in patterns:
        if p.name != "api-root":
            p.callback.login_required = False
    return patterns


urlpatterns = _patterns()
