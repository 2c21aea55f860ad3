"""A table lock held for a long time does not hang the site: requests that need the
locked table give up after the lock timeout with a 503 page, the workers stay free, and
static files and the login page keep answering (gunicorn, production settings)."""

import threading
import time
import urllib.request

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from tests.factories import add_member, make_collection, make_question

from .helpers import free_port, start_gunicorn, stop
from .test_database_outage import PASSWORD, Client

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def timed_get(base: str, path: str, client: Client | None = None) -> tuple[float, int, str]:
    t = time.monotonic()
    try:
        if client is not None:
            status, body = client.request(path)
        else:
            with urllib.request.urlopen(base + path, timeout=40) as r:
                status, body = r.status, r.read().decode(errors="replace")
    except OSError as e:
        status, body = 0, str(e)
    return time.monotonic() - t, status, body


def test_a_long_table_lock_gives_503s_and_static_files_keep_answering(tmp_path):
    c = make_collection(slug="stuck")
    user = get_user_model().objects.create_user("assessor", password=PASSWORD)
    add_member(collection=c, user=user, role="assessor")
    q = make_question(collection=c, text="Where is the Bastille?", unjudged=["a", "b"])
    q.assessors.add(user)
    s = connection.settings_dict
    connection.close()

    port = free_port()
    log = tmp_path / "gunicorn.log"
    server = start_gunicorn(port, log, workers=2, DJANGO_DB_LOCK_TIMEOUT_MS="2000")
    base = f"http://127.0.0.1:{port}"
    locker = psycopg.connect(
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
    )
    try:
        clients = [Client(base) for _ in range(4)]
        for cl in clients:
            cl.login("assessor")
        locker.execute("LOCK TABLE annotate_question IN ACCESS EXCLUSIVE MODE")
        pages: list = [None] * len(clients)

        def judge(i):
            pages[i] = timed_get(base, f"/questions/{q.pk}/judge/", clients[i])

        threads = [threading.Thread(target=judge, args=(i,)) for i in range(len(clients))]
        for t in threads:
            t.start()
        time.sleep(0.5)  # both workers are now waiting for the lock
        static = timed_get(base, "/static/css/app.css")
        login = timed_get(base, "/accounts/login/")
        for t in threads:
            t.join(40)
        locker.rollback()  # the lock is released only now, after 10+ seconds
        after = timed_get(base, f"/questions/{q.pk}/judge/", clients[0])
    finally:
        locker.close()
        stop(server)

    # each request waits at most the lock timeout (2 s), two workers serve four requests
    for elapsed, status, body in pages:
        assert status == 503, (status, body[-500:])
        assert "try again" in body and elapsed < 8, elapsed
    assert static[1] == 200 and static[0] < 6, static[:2]
    assert login[1] == 200 and login[0] < 6, login[:2]
    assert after[1] == 200 and "Where is the Bastille?" in after[2]
    text = log.read_text()
    assert "WORKER TIMEOUT" not in text, text[-2000:]
