"""CSRF is enforced on every POST, htmx ones included: a request without the token is
refused (403) and changes nothing; with the page's token it goes through."""

import pytest
from django.test import Client
from django.urls import get_resolver

from tests.test_login_required import API_NOT_FOUND, concrete, walk

pytestmark = pytest.mark.django_db


def post_urls():
    out = []
    for name, route in walk(get_resolver().url_patterns):
        url = concrete(route)
        if url and not name.startswith("admin:"):
            out.append(pytest.param(url, id=name))
    return out


@pytest.mark.parametrize("url", post_urls())
@pytest.mark.parametrize("htmx", [False, True])
def test_post_without_token_is_refused(demo, url, htmx):
    from django.contrib.auth import get_user_model

    from annotate.models import AnswerString, JudgmentEvent

    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.get(username="admin"))
    before = (AnswerString.objects.count(), JudgmentEvent.objects.count())
    headers = {"HX-Request": "true"} if htmx else {}
    r = client.post(url, {"op": "new", "string": "1"}, headers=headers)
    if url in API_NOT_FOUND:
        assert r.status_code == 404, (url, r.status_code)  # no endpoint, nothing to refuse
    elif url.startswith("/api/"):
        # the REST API takes no session (a token only), so it needs no CSRF token: the
        # browser's session cookie gets 401 (405 where nothing is posted); its docs pages
        # are pages (403)
        assert r.status_code in (401, 403, 405), (url, r.status_code)
    else:
        assert r.status_code == 403, (url, r.status_code)
    assert (AnswerString.objects.count(), JudgmentEvent.objects.count()) == before


def test_htmx_header_token_is_accepted(demo):
    """The page's token, sent as htmx sends it (X-CSRFToken from hx-headers on <body>)."""
    import re

    from django.contrib.auth import get_user_model

    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.get(username="organizer"))
    page = client.get("/collections/demo/runs/upload/").content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    r = client.post(
        "/collections/demo/runs/upload/",
        {"name": ""},
        headers={"HX-Request": "true", "X-CSRFToken": token},
    )
    # the form comes back with its errors, not a CSRF refusal
    assert r.status_code == 200 and "This field is required." in r.content.decode()
