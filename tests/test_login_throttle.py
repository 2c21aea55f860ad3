"""Login attempts are rate limited (per address and per username)."""

import html

import pytest

from config.auth import MAX_FAILURES
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def attempt(client, username, password, addr="10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=addr
    )


def refused(response) -> bool:
    """The login form came back saying the password did not match (not locked)."""
    return (
        response.status_code == 200
        and "Your username and password didn't match" in html.unescape(response.content.decode())
    )


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


def test_another_spelling_of_a_locked_name_is_locked_too(client):
    """Authentication reads the username NFKC-normalised: the full-width spelling of a
    locked user's name must not log in (nor clear the lock)."""
    from django.core.cache import cache

    cache.clear()
    make_user(username="dave", password="right-horse-battery")
    for _ in range(MAX_FAILURES):
        attempt(client, "dave", "wrong", addr="10.0.2.1")
    for spelling in ("ｄａｖｅ", " DAVE ", "Dave"):
        assert (
            attempt(client, spelling, "right-horse-battery", addr="10.0.2.2").status_code == 429
        ), spelling
    assert attempt(client, "dave", "right-horse-battery", addr="10.0.2.3").status_code == 429


def test_a_successful_login_does_not_count_against_its_address(client):
    from django.core.cache import cache

    cache.clear()
    make_user(username="erin", password="right-horse-battery")
    for _ in range(MAX_FAILURES + 2):
        assert attempt(client, "erin", "right-horse-battery", addr="10.0.3.1").status_code == 302
        client.logout()


def test_behind_a_proxy_clients_are_told_apart_by_the_configured_header(client, settings):
    from django.core.cache import cache

    cache.clear()
    make_user(username="frank", password="right-horse-battery")
    settings.CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "127.0.0.1"

    def via_proxy(username, password, forwarded):
        return client.post(
            "/accounts/login/",
            {"username": username, "password": password},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=forwarded,
        )

    # one client fails (spoofing a first entry does not help: the proxy's entry is last)
    for i in range(MAX_FAILURES):
        assert refused(via_proxy(f"nobody{i}", "wrong", f"1.2.3.{i}, 198.51.100.7"))
    assert via_proxy("nobody9", "wrong", "198.51.100.7").status_code == 429
    # everyone else behind the same proxy can still log in
    assert via_proxy("frank", "right-horse-battery", "203.0.113.5").status_code == 302


def test_the_proxy_header_is_ignored_unless_configured(client, settings):
    from django.core.cache import cache

    cache.clear()
    settings.CLIENT_IP_HEADER = ""
    for i in range(MAX_FAILURES):
        client.post(
            "/accounts/login/",
            {"username": f"x{i}", "password": "wrong"},
            REMOTE_ADDR="10.0.4.1",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{i}",
        )
    assert (
        client.post(
            "/accounts/login/",
            {"username": "y", "password": "wrong"},
            REMOTE_ADDR="10.0.4.1",
            HTTP_X_FORWARDED_FOR="192.0.2.99",
        ).status_code
        == 429
    )


def test_a_locked_address_adds_no_username_counters(client, settings):
    """Otherwise one address could fill the cache with counters until it culls the one
    that locks a username."""
    from django.core.cache import cache

    cache.clear()
    for i in range(MAX_FAILURES):
        attempt(client, f"spray{i}", "wrong", addr="10.0.5.1")
    for i in range(MAX_FAILURES, MAX_FAILURES + 20):
        assert attempt(client, f"spray{i}", "wrong", addr="10.0.5.1").status_code == 429
        assert cache.get(f"login-fail:user:spray{i}") is None
    assert settings.CACHES["default"]["OPTIONS"]["MAX_ENTRIES"] >= 100_000
