"""Every page needs login: walk the URLconf and request each pattern anonymously."""

import re
import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

DUMMY = {"int": "1", "slug": "demo", "str": "x", "path": "x/y", "uuid": str(uuid.uuid4())}
# the login pages themselves; an invited member's one-time set-password link and its last
# page (a token decides, tested in tests/annotate/test_invite.py); the site icon; the
# scripts' translations and the language switcher (the log-in page has both; the
# switcher keeps a choice only for a logged-in person: tests/annotate/test_language.py)
PUBLIC = {
    "login",
    "admin:login",
    "set-password",
    "set-password-done",
    "favicon",
    "javascript-catalog",
    "annotate:language-set",
}
API_PAGES = {"/api/docs"}  # of /api/, pages behind the login
# no endpoint: the root and any other path answer the JSON 404 (api:api-root, api:not-found)
API_NOT_FOUND = {"/api/", f"/api/{DUMMY['path']}"}


def walk(patterns, prefix="", namespace=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from walk(p.url_patterns, prefix + str(p.pattern), ns)
        elif isinstance(p, URLPattern):
            yield f"{namespace}{p.name}", prefix + str(p.pattern)


def concrete(route: str) -> str | None:
    """A URL for a route: converters get dummy values; regex routes (admin) are skipped."""
    if route.startswith("^") or "(?P" in route:
        return None
    return "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: DUMMY[m.group(1) or "str"], route)


def all_urls():
    out = []
    for name, route in walk(get_resolver().url_patterns):
        url = concrete(route)
        if url and name not in PUBLIC:
            out.append(pytest.param(url, id=name or url))
    return out


def test_the_walk_finds_the_app_pages():
    names = {name for name, _ in walk(get_resolver().url_patterns)}
    assert {
        "annotate:collection-list",
        "annotate:collection-detail",
        "evaluation:run-list",
        "admin:index",
    } <= names


@pytest.mark.django_db
@pytest.mark.parametrize("url", all_urls())
@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_request_is_sent_to_login(client, url, method):
    response = getattr(client, method)(url)
    if url in API_NOT_FOUND:
        assert response.status_code == 404 and response.json() == {"detail": "Not found"}
        return
    if url.startswith("/api/") and url not in API_PAGES:
        # the REST API answers a script, not a browser: 401 without a token (405 for a
        # method the endpoint does not have), never the login page nor any data
        assert response.status_code in (401, 405), (url, response.status_code)
        if response.status_code == 401:
            assert response.json() == {"detail": "Unauthorized"}, url
        return
    assert response.status_code == 302, (url, response.status_code)
    location = response.headers["Location"]
    assert "/login/" in location, location


@pytest.mark.django_db
def test_login_page_is_public(client):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert "<h1>Log in</h1>" in page.content.decode() and 'name="password"' in page.content.decode()


@pytest.mark.django_db
def test_the_public_link_pages_reveal_nothing_without_a_valid_token(client):
    page = client.get("/accounts/set-password/MQ/not-a-token/").content.decode()
    assert "This link cannot be used" in page and 'name="new_password1"' not in page
    r = client.post(
        "/accounts/set-password/MQ/not-a-token/",
        {"new_password1": "x-Long-pass-1234", "new_password2": "x-Long-pass-1234"},
    )
    assert r.status_code == 200 and "This link cannot be used" in r.content.decode()
