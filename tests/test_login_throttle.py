"""Wrong passwords are throttled per (username, address), per username across addresses and
per address across usernames; correct ones never count (README, "Login throttling")."""

import html

import pytest

from annotate.models import Role
from config.auth import ADDRESS_MAX_FAILURES, MAX_FAILURES, USER_MAX_FAILURES, login_counter_keys
from tests.factories import add_member, make_collection, make_user

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
    # the guesser's address is locked for that name, a wrong password too; the owner at
    # another address is not, nor another user at the guesser's address
    assert attempt(client, "alice", "wrong").status_code == 429
    assert attempt(client, "alice", "right-horse-battery", addr="10.0.0.2").status_code == 302
    client.logout()
    make_user(username="bob", password="right-horse-battery")
    assert attempt(client, "bob", "right-horse-battery").status_code == 302


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
            attempt(client, spelling, "right-horse-battery", addr="10.0.2.1").status_code == 429
        ), spelling
    assert attempt(client, "dave", "right-horse-battery", addr="10.0.2.1").status_code == 429


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
        assert refused(via_proxy("frank", "wrong", f"1.2.3.{i}, 198.51.100.7"))
    assert via_proxy("frank", "wrong", "1.2.3.99, 198.51.100.7").status_code == 429
    # everyone else behind the same proxy can still log in
    assert via_proxy("frank", "right-horse-battery", "203.0.113.5").status_code == 302


def test_the_proxy_header_is_ignored_unless_configured(client, settings):
    from django.core.cache import cache

    cache.clear()
    settings.CLIENT_IP_HEADER = ""
    for i in range(MAX_FAILURES):
        client.post(
            "/accounts/login/",
            {"username": "x", "password": "wrong"},
            REMOTE_ADDR="10.0.4.1",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{i}",
        )
    assert (
        client.post(
            "/accounts/login/",
            {"username": "x", "password": "wrong"},
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
    for i in range(ADDRESS_MAX_FAILURES):
        attempt(client, f"spray{i}", "wrong", addr="10.0.5.1")
    for i in range(ADDRESS_MAX_FAILURES, ADDRESS_MAX_FAILURES + 20):
        assert attempt(client, f"spray{i}", "wrong", addr="10.0.5.1").status_code == 429
        keys = login_counter_keys(username=f"spray{i}", address="10.0.5.1")
        assert cache.get(keys["user"]) is None and cache.get(keys["pair"]) is None
    assert settings.CACHES["default"]["OPTIONS"]["MAX_ENTRIES"] >= 100_000


def test_wrong_passwords_elsewhere_do_not_lock_the_organizer_out(client):
    """Anyone who knows a username could otherwise lock its owner out for the window."""
    from django.core.cache import cache

    cache.clear()
    organizer = make_user(username="olga", password="right-horse-battery")
    add_member(collection=make_collection(), user=organizer, role=Role.ORGANIZER)
    for _ in range(MAX_FAILURES):
        assert refused(attempt(client, "olga", "wrong", addr="203.0.113.66"))
    assert attempt(client, "olga", "right-horse-battery", addr="203.0.113.66").status_code == 429
    assert attempt(client, "olga", "right-horse-battery", addr="10.0.6.1").status_code == 302


def test_a_guesser_at_one_address_gets_max_failures_checks(client):
    from django.core.cache import cache

    cache.clear()
    make_user(username="hank", password="right-horse-battery")
    checked = [refused(attempt(client, "hank", f"guess{i}", addr="10.0.7.1")) for i in range(50)]
    assert checked == [True] * MAX_FAILURES + [False] * (50 - MAX_FAILURES)
    # the right password is refused there too (a lock the guesser could test is no lock)
    locked = attempt(client, "hank", "right-horse-battery", addr="10.0.7.1")
    assert locked.status_code == 429 and "Too many failed attempts" in locked.content.decode()
    assert 1 <= int(locked["Retry-After"]) <= 15 * 60


def test_a_global_cap_slows_a_distributed_guess(client):
    """Past USER_MAX_FAILURES wrong passwords for one name from all addresses together, an
    address with a failure for it is refused; one without is still checked, once."""
    from django.core.cache import cache

    cache.clear()
    make_user(username="ivy", password="right-horse-battery")
    per_address = MAX_FAILURES - 1
    bots = [f"198.18.0.{i}" for i in range(-(-USER_MAX_FAILURES // per_address))]
    for n in range(USER_MAX_FAILURES):
        assert refused(attempt(client, "ivy", "wrong", addr=bots[n // per_address]))
    # each bot is still under the per-address limit, yet refused now
    for bot in bots:
        assert attempt(client, "ivy", "guess", addr=bot).status_code == 429
    # a fresh address gets one check, then is refused like the others
    assert refused(attempt(client, "ivy", "guess", addr="198.18.1.1"))
    assert attempt(client, "ivy", "guess", addr="198.18.1.1").status_code == 429
    # the owner at an address without failures logs in
    assert attempt(client, "ivy", "right-horse-battery", addr="10.0.8.1").status_code == 302


def test_an_address_is_locked_only_past_the_failures_of_a_whole_lab(client):
    """Behind one NAT: the others' typos never refuse a correct password below
    ADDRESS_MAX_FAILURES; a password sprayer is stopped there."""
    from django.core.cache import cache

    cache.clear()
    make_user(username="jo", password="right-horse-battery")
    nat = "192.0.2.200"
    for n in range(ADDRESS_MAX_FAILURES - 1):
        assert refused(attempt(client, f"student{n // (MAX_FAILURES - 1)}", "typo", addr=nat))
    assert attempt(client, "jo", "right-horse-battery", addr=nat).status_code == 302
    client.logout()
    assert refused(attempt(client, "sprayed", "password1", addr=nat))
    assert attempt(client, "jo", "right-horse-battery", addr=nat).status_code == 429


def test_refused_attempts_count_nothing(client):
    """A 429 checked no password: hammering a locked pair must not add up to the address
    cap (or any other)."""
    from django.core.cache import cache

    cache.clear()
    make_user(username="kim", password="right-horse-battery")
    for _ in range(MAX_FAILURES):
        attempt(client, "kim", "wrong", addr="10.0.9.1")
    for _ in range(ADDRESS_MAX_FAILURES + 5):
        assert attempt(client, "kim", "wrong", addr="10.0.9.1").status_code == 429
    make_user(username="lee", password="right-horse-battery")
    assert attempt(client, "lee", "right-horse-battery", addr="10.0.9.1").status_code == 302


def test_a_success_clears_its_own_failures_only(client):
    """The owner's typos at their address are forgotten once they log in there; a
    guesser's at another address are not."""
    from django.core.cache import cache

    cache.clear()
    make_user(username="max", password="right-horse-battery")
    for _ in range(MAX_FAILURES - 1):
        assert refused(attempt(client, "max", "typo", addr="10.0.10.1"))
        assert refused(attempt(client, "max", "guess", addr="10.0.10.2"))
    assert attempt(client, "max", "right-horse-battery", addr="10.0.10.1").status_code == 302
    client.logout()
    for _ in range(MAX_FAILURES - 1):
        assert refused(attempt(client, "max", "typo", addr="10.0.10.1"))
    assert refused(attempt(client, "max", "guess", addr="10.0.10.2"))
    assert attempt(client, "max", "guess", addr="10.0.10.2").status_code == 429
