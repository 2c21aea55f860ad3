"""Parallel logins (PostgreSQL: real concurrency, the production password hasher): wrong
passwords are all counted, no more are checked than a limit allows, and correct ones are
never refused because others log in or mistype at the same moment.

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/test_login_throttle_race.py"""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.db import connection
from django.test import Client

from config.auth import MAX_FAILURES, USER_MAX_FAILURES, count_attempt
from tests.factories import make_user

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

PASSWORD = "right-horse-battery"


def parallel(n, call):
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i):
        try:
            barrier.wait()
            results[i] = call(i)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def make_users(*usernames):
    """Users with PASSWORD, hashed once (the production hasher costs ~0.3 s a password)."""
    User = get_user_model()
    encoded = make_password(PASSWORD)
    User.objects.bulk_create(User(username=name, password=encoded) for name in usernames)


def login(username, password, addr):
    response = Client().post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=addr
    )
    return response.status_code


def test_parallel_increments_are_not_lost():
    cache.clear()
    results = parallel(40, lambda i: count_attempt("race-key"))
    assert sorted(results) == list(range(1, 41))
    assert cache.get("race-key") == 40


def test_twenty_parallel_correct_logins_from_one_address_all_succeed():
    """A class behind one NAT starting a session together (the red team: 5 x 302, 15 x 429
    and the address locked)."""
    cache.clear()
    make_users(*(f"student{i}" for i in range(21)))
    statuses = parallel(20, lambda i: login(f"student{i}", PASSWORD, "192.0.2.10"))
    assert statuses == [302] * 20
    assert login("student20", PASSWORD, "192.0.2.10") == 302


def test_one_user_logging_in_twenty_times_at_once_always_succeeds():
    cache.clear()
    make_user(username="tabs", password=PASSWORD)
    statuses = parallel(20, lambda i: login("tabs", PASSWORD, "192.0.2.11"))
    assert statuses == [302] * 20
    assert login("tabs", PASSWORD, "192.0.2.11") == 302


def test_correct_passwords_are_not_refused_while_others_mistype():
    cache.clear()
    make_users(*(f"pupil{i}" for i in range(10)), "clumsy")

    def attempt(i):
        if i % 2:
            return login(f"pupil{i // 2}", PASSWORD, "192.0.2.12")
        return login("clumsy", "wrong", "192.0.2.12")

    statuses = parallel(20, attempt)
    assert [statuses[i] for i in range(1, 20, 2)] == [302] * 10
    mistyped = [statuses[i] for i in range(0, 20, 2)]
    assert mistyped.count(200) == MAX_FAILURES and mistyped.count(429) == 10 - MAX_FAILURES


def test_forty_parallel_wrong_passwords_from_one_address_get_at_most_the_limit_checked():
    cache.clear()
    make_user(username="gina", password=PASSWORD)
    statuses = parallel(40, lambda i: login("gina", "wrong", "10.9.0.1"))
    assert statuses.count(200) == MAX_FAILURES, statuses
    assert statuses.count(429) == 40 - MAX_FAILURES
    assert login("gina", PASSWORD, "10.9.0.1") == 429
    assert login("gina", PASSWORD, "10.9.99.1") == 302


def test_forty_parallel_wrong_passwords_from_forty_addresses_meet_the_global_cap():
    """Each address is checked once; past USER_MAX_FAILURES every one of them is refused,
    and the owner at an address without failures still logs in."""
    assert 40 > USER_MAX_FAILURES
    cache.clear()
    make_user(username="hugo", password=PASSWORD)
    statuses = parallel(40, lambda i: login("hugo", "wrong", f"10.8.{i}.1"))
    assert statuses == [200] * 40
    assert login("hugo", PASSWORD, "10.8.0.1") == 429
    assert login("hugo", PASSWORD, "10.8.99.1") == 302
