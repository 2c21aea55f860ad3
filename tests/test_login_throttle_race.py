"""Parallel failed logins for one user are all counted (PostgreSQL: real concurrency).

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/test_login_throttle_race.py"""

import threading

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client

from config.auth import MAX_FAILURES, count_attempt
from tests.factories import make_user

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


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


def test_parallel_increments_are_not_lost():
    cache.clear()
    results = parallel(40, lambda i: count_attempt("race-key"))
    assert sorted(results) == list(range(1, 41))
    assert cache.get("race-key") == 40


def test_forty_parallel_wrong_passwords_get_at_most_the_limit_checked():
    cache.clear()
    make_user(username="gina", password="right-horse-battery")

    def attempt(i):
        return (
            Client()
            .post(
                "/accounts/login/",
                {"username": "gina", "password": "wrong"},
                REMOTE_ADDR=f"10.9.{i}.1",
            )
            .status_code
        )

    statuses = parallel(40, attempt)
    assert statuses.count(200) == MAX_FAILURES, statuses
    assert statuses.count(429) == 40 - MAX_FAILURES
    assert (
        Client()
        .post(
            "/accounts/login/",
            {"username": "gina", "password": "right-horse-battery"},
            REMOTE_ADDR="10.9.99.1",
        )
        .status_code
        == 429
    )
