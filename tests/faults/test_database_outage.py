"""The database goes away under load: requests fail cleanly while it is away, and the app
(gunicorn with persistent connections) recovers by itself when it is back.

The outage is made on the test database only, so other users of the server are not
disturbed: new connections to it are refused (ALLOW_CONNECTIONS false) and every backend
of the app is terminated, as a restart of PostgreSQL would; after a while connections are
allowed again."""

import http.cookiejar
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from annotate.models import AnswerString
from tests.factories import add_member, make_collection, make_question

from .helpers import admin_sql, free_port, start_gunicorn, stop

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

PASSWORD = "outage-pw-8841"
RE_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
RE_VERSION = re.compile(r'id="workspace"[^>]*data-version="(\d+)"')


def cut_off(dbname: str, *, allow: bool) -> None:
    admin_sql(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS {str(allow).lower()}')
    if not allow:
        admin_sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
            "AND pid <> pg_backend_pid()",
            dbname,
        )


class Client:
    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def request(self, path: str, data: dict | None = None, headers=None) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    def login(self, username: str) -> None:
        status, page = self.request("/accounts/login/")
        assert status == 200, page[-2000:]
        status, _ = self.request(
            "/accounts/login/",
            {
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": RE_CSRF.search(page).group(1),
            },
        )
        assert status == 200  # redirected to the collection list


def test_requests_fail_cleanly_during_an_outage_and_the_app_recovers(tmp_path):
    c = make_collection(slug="outage")
    user = get_user_model().objects.create_user("assessor", password=PASSWORD)
    add_member(collection=c, user=user, role="assessor")
    q = make_question(
        collection=c, text="Where is the Bastille?", unjudged=[f"candidate {i}" for i in range(40)]
    )
    q.assessors.add(user)
    dbname = connection.settings_dict["NAME"]
    url = f"/questions/{q.pk}/judge/"
    connection.close()  # the test's own connection must not keep the outage from starting

    port = free_port()
    server = start_gunicorn(port, tmp_path / "gunicorn.log")
    results: list[tuple[float, float, str, str]] = []  # (start, end, kind, outcome)
    stop_at = time.monotonic() + 60
    phase = {"outage": None, "back": None}
    try:
        client = Client(f"http://127.0.0.1:{port}")
        client.login("assessor")
        state = {"version": 0, "uncertain": 0}  # acknowledged version; writes not answered

        def running() -> bool:
            now = time.monotonic()
            return now < stop_at and (phase["back"] is None or now < phase["back"] + 4)

        def load():
            while running():
                time.sleep(0.02)
                t = time.monotonic()
                try:
                    status, html = client.request(url)
                except OSError as e:
                    results.append((t, time.monotonic(), "read", f"connection error {e}"))
                    continue
                if status != 200:
                    results.append((t, time.monotonic(), "read", f"{status}"))
                    continue
                version = int(RE_VERSION.search(html).group(1))
                # a write that got no answer may or may not have been applied
                low = state["version"]
                good = (
                    "Where is the Bastille?" in html and low <= version <= low + state["uncertain"]
                )
                outcome = "ok" if good else f"WRONG version {version}"
                results.append((t, time.monotonic(), "read", outcome))
                state.update(version=version, uncertain=0)
                ids = re.findall(r'data-id="(\d+)" data-token="u"', html)
                if not ids:
                    continue
                t = time.monotonic()
                try:
                    status, html = client.request(
                        f"/questions/{q.pk}/act/",
                        {
                            "op": "incorrect",
                            "string": ids[0],
                            "expect": "u",
                            "version": version,
                            "csrfmiddlewaretoken": RE_CSRF.search(html).group(1),
                        },
                        headers={"HX-Request": "true"},
                    )
                except OSError as e:
                    state["uncertain"] += 1
                    results.append((t, time.monotonic(), "write", f"connection error {e}"))
                    continue
                if status == 200 and RE_VERSION.search(html):
                    new = int(RE_VERSION.search(html).group(1))
                    results.append(
                        (
                            t,
                            time.monotonic(),
                            "write",
                            "ok" if new == version + 1 else f"WRONG version {new}",
                        )
                    )
                    state["version"] = new
                else:
                    state["uncertain"] += 1
                    results.append((t, time.monotonic(), "write", f"{status}"))
                time.sleep(0.05)

        worker = threading.Thread(target=load)
        worker.start()
        # the outage starts once the app has answered (a loaded machine starts gunicorn slowly)
        ready_by = time.monotonic() + 20
        while time.monotonic() < ready_by and not any(r[3] == "ok" for r in results):
            time.sleep(0.1)
        time.sleep(1)
        phase["outage"] = time.monotonic()
        cut_off(dbname, allow=False)
        time.sleep(3)
        cut_off(dbname, allow=True)
        phase["back"] = time.monotonic()
        worker.join(40)
        assert not worker.is_alive()
    finally:
        cut_off(dbname, allow=True)
        stop(server)

    before = [r for r in results if r[1] < phase["outage"]]
    during = [r for r in results if phase["outage"] + 0.3 < r[0] and r[1] < phase["back"]]
    after = [r for r in results if r[0] > phase["back"] + 0.5]
    assert not [r for r in results if r[3].startswith("WRONG")], results
    assert before and all(r[3] == "ok" for r in before), before
    # during the outage: clean failures only (a 5xx answer, never a 4xx or a wrong page)
    assert during and all(r[3].startswith(("5", "connection error")) for r in during), during
    # back: every request succeeds again, without restarting the app
    assert after and all(r[3] == "ok" for r in after), after
    q.refresh_from_db()
    assert q.version == state["version"]  # the last page shown is the truth
    assert AnswerString.objects.filter(question=q, judged_at__isnull=False).count() == q.version
    print(
        f"{len(before)} before, {len(during)} during (all failed cleanly), {len(after)} after "
        f"the outage; {q.version} judgments written"
    )
