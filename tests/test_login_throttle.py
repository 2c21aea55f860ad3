"""Login attempts are rate limited (per address and per username)."""

import html

import pytest

from config.auth import MAX_FAILURES
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def attempt(client, username, password, addr="10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=addr)


def refused(response) -> bool:
    """The login form came back saying the password did not match (not locked)."""
    return (response.status_code == 200
            and "Your username and password didn't match" in html.unescape(
                response.content.decode()))


def test_failed_logins_are_throttled(client):
    from django.core.cache import cache
    cache.clear()
    make_user(username="alice", password="right-horse-battery")
    for _ in range(MAX_FAILURES):
        assert refused(attempt(client, "alice", "wrong"))
    locked = attempt(client, "alice", "right-horse-battery")
    assert locked.status_code == 429
    assert "Too many failed attempts" in locked.content.decode()
    # the username is locked from another address too; another user from a new address is not
    assert attempt(client, "alice", "right-horse-battery", addr="10.0.0.2").status_code == 429
    make_user(username="bob", password="right-horse-battery")
    assert attempt(client, "bob", "right-horse-battery", addr="10.0.0.3").status_code == 302


def test_success_resets_the_username_counter(client):
    from django.core.cache import cache
    cache.clear()
    make_user(username="carol", password="right-horse-battery")
    for _ in range(MAX_FAILURES - 1):
        attempt(client, "carol", "wrong", addr="10.0.1.1")
    assert attempt(client, "carol", "right-horse-battery", addr="10.0.1.2").status_code == 302
    client.logout()
    assert refused(attempt(client, "carol", "wrong", addr="10.0.1.3"))
