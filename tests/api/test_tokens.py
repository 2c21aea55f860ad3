"""Personal API tokens: created on the user's page (shown once, stored hashed), listed,
revoked; what authenticates and what does not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from api.models import ApiToken, token_digest
from api.services import api_token_create, api_token_revoke
from tests.factories import make_user

from .conftest import ApiClient

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_creating_a_token_shows_it_once_and_stores_only_its_digest():
    user = make_user(username="scripter")
    client = logged_in(user)
    page = client.get("/account/tokens/")
    assert page.status_code == 200 and "No tokens yet." in page.content.decode()
    response = client.post("/account/tokens/", {"name": "CI runs"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    token = ApiToken.objects.get(user=user)
    body = response.content.decode()
    secret = body.split('id="token-secret">')[1].split("<")[0]
    assert secret.startswith("qas_") and len(secret) >= 40
    assert token.digest == token_digest(secret) and secret not in token.digest
    assert token.prefix == secret[:12] and token.name == "CI runs"
    # the secret is nowhere in the database, and never shown again
    assert not ApiToken.objects.filter(name__contains=secret[12:]).exists()
    again = client.get("/account/tokens/").content.decode()
    assert secret not in again and f"{token.prefix}…" in again and "CI runs" in again
    assert ApiClient(secret).get("/api/me").json() == {"username": "scripter", "staff": False}


def test_a_token_needs_a_name():
    user = make_user()
    response = logged_in(user).post("/account/tokens/", {"name": ""})
    assert response.status_code == 200 and not ApiToken.objects.exists()
    assert "This field is required." in response.content.decode()


def test_revoking_a_token_ends_its_access_at_once():
    user = make_user()
    created = api_token_create(user=user, name="laptop")
    api = ApiClient(created.secret)
    assert api.get("/api/me").status_code == 200
    response = logged_in(user).post(f"/account/tokens/{created.token.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == "/account/tokens/"
    created.token.refresh_from_db()
    assert created.token.revoked
    assert api.get("/api/me").status_code == 401
    page = logged_in(user).get("/account/tokens/").content.decode()
    assert "revoked" in page and f"/account/tokens/{created.token.pk}/revoke/" not in page


def test_nobody_revokes_another_users_token():
    owner, other = make_user(), make_user()
    staff = make_user(staff=True)
    created = api_token_create(user=owner, name="mine")
    for user in (other, staff):
        assert (
            logged_in(user).post(f"/account/tokens/{created.token.pk}/revoke/").status_code == 404
        )
        assert not api_token_revoke(user=user, token_id=created.token.pk)
    assert ApiClient(created.secret).get("/api/me").status_code == 200
    # nor sees it
    assert "mine" not in logged_in(other).get("/account/tokens/").content.decode()


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Token qas_x",
        "Basic dXNlcjpwdw==",
        "Bearer qas_not-a-real-token",
        "Bearer not-our-prefix",
        "Bearer " + "qas_" + "x" * 500,
        "bearer qas_lowercase-scheme-unknown-token",
    ],
)
def test_bad_tokens_get_401(header):
    client = Client()
    headers = {"Authorization": header} if header is not None else {}
    response = client.get("/api/collections", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}


def test_a_session_is_not_a_token():
    """The API does not accept the browser's session cookie (no CSRF to worry about)."""
    client = logged_in(make_user())
    assert client.get("/api/me").status_code == 401


def test_a_deactivated_users_token_stops_working():
    user = make_user()
    created = api_token_create(user=user, name="t")
    user.is_active = False
    user.save()
    assert ApiClient(created.secret).get("/api/me").status_code == 401


def test_last_used_is_recorded_at_most_once_a_minute():
    user = make_user()
    created = api_token_create(user=user, name="t")
    api = ApiClient(created.secret)
    api.get("/api/me")
    created.token.refresh_from_db()
    first = created.token.last_used_at
    assert first is not None
    api.get("/api/me")
    created.token.refresh_from_db()
    assert created.token.last_used_at == first
    ApiToken.objects.filter(pk=created.token.pk).update(
        last_used_at=timezone.now() - timedelta(minutes=5)
    )
    api.get("/api/me")
    created.token.refresh_from_db()
    assert created.token.last_used_at > first


def test_the_rate_limit_answers_429_per_user(settings):
    settings.API_RATE = "3/min"
    a = ApiClient(api_token_create(user=make_user(), name="a").secret)
    b = ApiClient(api_token_create(user=make_user(), name="b").secret)
    assert [a.get("/api/me").status_code for _ in range(3)] == [200, 200, 200]
    refused = a.get("/api/me")
    assert refused.status_code == 429
    assert refused.json() == {"detail": "Too many requests."}
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert b.get("/api/me").status_code == 200  # another user has a count of its own


def test_a_users_tokens_share_one_count(settings):
    """More tokens give no more requests: the red team's 20 tokens x 30 requests."""
    settings.API_RATE = "4/min"
    user = make_user()
    clients = [ApiClient(api_token_create(user=user, name=f"t{i}").secret) for i in range(4)]
    codes = [c.get("/api/me").status_code for c in clients for _ in range(2)]
    assert codes.count(200) == 4 and codes.count(429) == 4
    assert codes[:4] == [200, 200, 200, 200]


def test_failed_authentications_are_counted_per_address(settings, monkeypatch):
    from api import auth

    monkeypatch.setattr(auth, "MAX_AUTH_FAILURES", 3)
    bad = {"Authorization": "Bearer qas_not-a-real-token"}
    codes = [Client().get("/api/me", headers=bad).status_code for _ in range(3)]
    assert codes == [401, 401, 401]
    # no token at all counts too; past the limit: 429 with Retry-After, before any lookup
    refused = Client().get("/api/me")
    assert refused.status_code == 429
    assert "Too many failed authentications" in refused.json()["detail"]
    assert 1 <= int(refused["Retry-After"]) <= auth.AUTH_FAILURE_WINDOW
    # a good token from the same address is still accepted (only failures are throttled)
    good = ApiClient(api_token_create(user=make_user(), name="ok").secret)
    assert good.get("/api/me").status_code == 200
    # the schema, which also takes a token, is locked the same way
    assert Client().get("/api/openapi.json", headers=bad).status_code == 429
    # another address is not
    other = Client(REMOTE_ADDR="10.9.8.7")
    assert other.get("/api/me", headers=good.headers).status_code == 200
    assert other.get("/api/me", headers=bad).status_code == 401


def test_invalid_tokens_from_an_address_do_not_lock_out_its_valid_tokens():
    """A script retrying a revoked token must not lock out every valid token behind the
    same address (a lab, a CI runner's NAT)."""
    from api.auth import MAX_AUTH_FAILURES

    bad = {"Authorization": "Bearer qas_not-a-real-token"}
    codes = [Client().get("/api/me", headers=bad).status_code for _ in range(MAX_AUTH_FAILURES)]
    assert codes == [401] * MAX_AUTH_FAILURES
    assert Client().get("/api/me", headers=bad).status_code == 429
    good = ApiClient(api_token_create(user=make_user(username="lab-script"), name="ok").secret)
    assert good.get("/api/me").json()["username"] == "lab-script"
    assert Client().get("/api/openapi.json", headers=good.headers).status_code == 200
    # the invalid ones stay throttled, and a good token gives them nothing back
    assert Client().get("/api/me", headers=bad).status_code == 429
    assert Client().get("/api/me").status_code == 429


def test_a_user_holds_at_most_max_active_tokens():
    from django.core.management import CommandError, call_command

    from api.services import MAX_ACTIVE_TOKENS, TooManyTokens

    user = make_user(username="hoarder")
    tokens = [api_token_create(user=user, name=f"t{i}") for i in range(MAX_ACTIVE_TOKENS)]
    with pytest.raises(TooManyTokens, match=f"already have {MAX_ACTIVE_TOKENS} active tokens"):
        api_token_create(user=user, name="one more")
    client = logged_in(user)
    page = client.post("/account/tokens/", {"name": "one more"})
    assert page.status_code == 200 and "revoke one you no longer use" in page.content.decode()
    assert ApiToken.objects.filter(user=user).count() == MAX_ACTIVE_TOKENS
    with pytest.raises(CommandError, match="active tokens"):
        call_command("create_api_token", "hoarder", "--name", "CI")
    # a revoked token frees its place
    api_token_revoke(user=user, token_id=tokens[0].token.pk)
    assert api_token_create(user=user, name="one more").token.name == "one more"


def test_the_command_prints_a_working_token():
    from io import StringIO

    from django.core.management import CommandError, call_command

    make_user(username="ci-bot")
    out = StringIO()
    call_command("create_api_token", "ci-bot", "--name", "CI", stdout=out)
    secret = out.getvalue().strip()
    assert ApiClient(secret).get("/api/me").json()["username"] == "ci-bot"
    assert ApiToken.objects.get(user__username="ci-bot").name == "CI"
    with pytest.raises(CommandError):
        call_command("create_api_token", "nobody", stdout=StringIO())
