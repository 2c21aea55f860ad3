"""Two assessors judging one question at once through gunicorn + PostgreSQL: no 500s, no lost
or duplicated judgments.

    .venv/bin/python bench/judge_race.py [--requests 2500] [--assessors 2] [--threads 8]
                                         [--workers 2] [--gthreads 4] [--port 8105]
                                         [--database qa_h5_race] [--keep]

Creates the PostgreSQL database --database (dropped first; 127.0.0.1:5432, user postgres,
trust), migrates it, makes one collection (levels S/A/B) with one question (3 synsets, 40
candidates) assigned to --assessors assessors, starts gunicorn (gthread workers, DEBUG off)
on 127.0.0.1:--port, and lets --threads threads per assessor (one login per assessor, as
tabs of one browser) send --requests requests in all, interleaved, to that question: each
thread acts on the page it last got back, as a keypress does -- a level change, a move into
a synset by its number, a new synset, incorrect, back to the pool, now and then a merge or
a reload -- with the page's version, synset list and string tokens.  Then it prints the
requests sent, the responses by status class, the count >= 500, the operations the server
acknowledged (a workspace without a refusal notice) against the events and version bumps
recorded, and the elapsed time; and drops the database (unless --keep).  Exit status 1 on
any response >= 500, a lost or duplicated write, or a broken invariant of the question.

The client (``race``) and the checks (``verify``) are shared with
tests/faults/test_judge_race.py.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG = "postgres://postgres@127.0.0.1:5432"
PASSWORD = "race-pw-7716"
LEVELS = ("S", "A", "B")

RE_WS = re.compile(r'id="workspace"[^>]*data-version="(\d+)"')
RE_ITEM = re.compile(
    r'<li class="item (?:cand|wrong|member)"[^>]*data-id="(\d+)" '
    r'data-token="([^"]+)"'
)
RE_SYNSET = re.compile(r'data-synset="(\d+)" data-ordinal="(\d+)"')
RE_PAGE = re.compile(r'name="page_synsets" value="([\d ]*)"')
RE_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
RE_NOTICE = re.compile(r'class="msg msg-(\w+) notice"')


# -- the client -------------------------------------------------------------------------------
class Session:
    """One logged-in assessor (cookies shared by its threads, as tabs of one browser)."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def request(
        self, path: str, data: dict | None = None, htmx: bool = True
    ) -> tuple[int | None, str]:
        """(status, body); status None when the connection failed."""
        body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
        headers = {"HX-Request": "true"} if htmx else {}
        req = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except OSError as e:
            return None, str(e)

    def login(self, username: str, password: str) -> None:
        status, page = self.request("/accounts/login/", htmx=False)
        assert status == 200, (status, page[-500:])
        status, page = self.request(
            "/accounts/login/",
            {
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": RE_CSRF.search(page).group(1),
            },
            htmx=False,
        )
        assert status == 200 and 'name="password"' not in page, f"login failed ({status})"


def parse(html: str) -> dict | None:
    m = RE_WS.search(html)
    if m is None:
        return None
    notice = RE_NOTICE.search(html)
    page = RE_PAGE.search(html)
    return {
        "version": int(m.group(1)),
        "strings": {int(pk): token for pk, token in RE_ITEM.findall(html)},
        "synsets": {int(pk): int(o) for pk, o in RE_SYNSET.findall(html)},
        "page_synsets": page.group(1) if page else "",
        "csrf": RE_CSRF.search(html).group(1),
        "notice": notice.group(1) if notice else "",
    }


def choose(ws: dict, rng: random.Random) -> tuple[str, dict | None]:
    """The next operation on the page ``ws`` (as keys pressed on it would send)."""
    strings = ws["strings"]
    cands = [pk for pk, t in strings.items() if t == "u"]
    members = [pk for pk, t in strings.items() if "/" in t]
    wrong = [pk for pk, t in strings.items() if t == "x"]
    ordinals = sorted(ws["synsets"].values())
    base = {
        "version": ws["version"],
        "page_synsets": ws["page_synsets"],
        "csrfmiddlewaretoken": ws["csrf"],
    }
    r = rng.random()
    if r < 0.06:
        return "read", None
    if r < 0.09 and len(ordinals) >= 2:
        other, into = rng.sample(sorted(ws["synsets"]), 2)
        return "merge", {**base, "op": "merge", "ordinal": ws["synsets"][into], "merge": other}
    if r < 0.25 and members:
        s = rng.choice(members)
        return "level", {
            **base,
            "op": "level",
            "string": s,
            "expect": strings[s],
            "level": rng.choice(LEVELS),
        }
    if r < 0.55 and ordinals and (cands or members):
        s = rng.choice(cands + members)
        data = {
            **base,
            "op": "add",
            "string": s,
            "expect": strings[s],
            "ordinal": rng.choice(ordinals),
        }
        if strings[s] == "u":
            data["level"] = rng.choice(LEVELS)
        return "move" if strings[s] != "u" else "add", data
    if r < 0.72 and (cands or members):
        s = rng.choice(cands + members)
        return "new", {
            **base,
            "op": "new",
            "string": s,
            "expect": strings[s],
            "level": rng.choice(LEVELS),
        }
    if r < 0.85 and (cands or members):
        s = rng.choice(cands + members)
        return "incorrect", {**base, "op": "incorrect", "string": s, "expect": strings[s]}
    if members or wrong:
        s = rng.choice(members + wrong)
        return "unjudge", {**base, "op": "unjudge", "string": s, "expect": strings[s]}
    return "read", None


def race(
    *,
    base: str,
    question: int,
    usernames: list[str],
    password: str,
    threads: int,
    requests: int,
    seed: int = 5,
) -> dict:
    """``threads`` threads per assessor send ``requests`` requests in all to the question
    ``question``; returns the tallies (see ``report``)."""
    url = f"/questions/{question}/"
    sessions = []
    for name in usernames:
        s = Session(base)
        s.login(name, password)
        sessions.append(s)
    lock = threading.Lock()
    tally = {
        "sent": 0,
        "status": Counter(),
        "ops": Counter(),
        "acked": 0,
        "refused": 0,
        "stale_applied": 0,
        "unanswered_writes": 0,
        "errors": [],
        "left": requests,
    }

    def worker(session: Session, n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        ws = None
        while True:
            with lock:
                if tally["left"] <= 0:
                    return
                tally["left"] -= 1
            kind, data = ("read", None) if ws is None else choose(ws, rng)
            if data is None:
                status, html = session.request(url + "judge/")
            else:
                status, html = session.request(url + "act/", data)
            fresh = parse(html) if status == 200 else None
            with lock:
                tally["sent"] += 1
                tally["ops"][kind] += 1
                tally["status"]["error" if status is None else f"{status // 100}xx"] += 1
                if status is None or status >= 500 or (status == 200 and fresh is None):
                    if len(tally["errors"]) < 10:
                        tally["errors"].append(f"{kind}: {status} {html[-300:]!r}")
                if data is not None:
                    if fresh is None:
                        tally["unanswered_writes"] += 1
                    elif fresh["notice"] == "warning":
                        tally["refused"] += 1
                    else:
                        tally["acked"] += 1
                        tally["stale_applied"] += fresh["notice"] == "info"
            if fresh is not None:
                ws = fresh
            elif status is not None and status < 500:
                ws = None  # reload the page

    start = time.perf_counter()
    pool = [
        threading.Thread(target=worker, args=(s, i * threads + j))
        for i, s in enumerate(sessions)
        for j in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    tally["elapsed"] = time.perf_counter() - start
    return tally


# -- the checks (Django ORM) ------------------------------------------------------------------
def verify(*, question: int, events_before: int, version_before: int, tally: dict) -> dict:
    """Events and version bumps recorded for the question against the acknowledged writes,
    and the question's invariants (ordinals 1..R, no empty synset, members judged)."""
    from annotate.models import AnswerString, AnswerSynset, JudgmentEvent, Question

    events = JudgmentEvent.objects.filter(question_id=question).count() - events_before
    version = Question.objects.get(pk=question).version - version_before
    synsets = list(AnswerSynset.objects.filter(question_id=question).order_by("ordinal"))
    problems = []
    if [s.ordinal for s in synsets] != list(range(1, len(synsets) + 1)):
        problems.append("synset ordinals are not 1..R")
    members = Counter(
        AnswerString.objects.filter(question_id=question, synset__isnull=False).values_list(
            "synset_id", flat=True
        )
    )
    if any(members[s.pk] == 0 for s in synsets):
        problems.append("an empty synset was left behind")
    if (
        AnswerString.objects.filter(question_id=question, synset__isnull=False)
        .filter(level__isnull=True)
        .exists()
    ):
        problems.append("a string in a synset without a level")
    acked, unanswered = tally["acked"], tally["unanswered_writes"]
    # a write that got no answer may or may not have been applied
    lost = max(0, acked - events)
    duplicated = max(0, events - acked - unanswered)
    return {
        "events": events,
        "version_bumps": version,
        "lost": lost,
        "duplicated": duplicated,
        "invariants": problems,
        "ok": (
            lost == 0
            and duplicated == 0
            and version == events
            and not problems
            and not any(k in tally["status"] for k in ("5xx", "error"))
        ),
    }


def report(tally: dict, checks: dict, *, users: int, threads: int) -> str:
    status = tally["status"]
    n500 = status.get("5xx", 0)
    ops = ", ".join(f"{k} {v}" for k, v in sorted(tally["ops"].items()))
    lines = [
        f"requests sent: {tally['sent']} ({users} assessors x {threads} threads, one question)",
        f"  by operation: {ops}",
        "responses by status class: "
        + ", ".join(
            f"{k} {status[k]}" for k in ("2xx", "3xx", "4xx", "5xx", "error") if status.get(k)
        ),
        f"responses >= 500: {n500}; connection errors: {status.get('error', 0)}",
        f"writes acknowledged: {tally['acked']} (of them applied over someone else's change,"
        f" with an info notice: {tally['stale_applied']}); refused with a notice: "
        f"{tally['refused']}; unanswered: {tally['unanswered_writes']}",
        f"events recorded: {checks['events']}; version bumps: {checks['version_bumps']}; "
        f"lost: {checks['lost']}; duplicated: {checks['duplicated']}",
        "question invariants: " + ("; ".join(checks["invariants"]) or "ok"),
        f"elapsed: {tally['elapsed']:.1f} s ({tally['sent'] / tally['elapsed']:.0f} requests/s)",
    ]
    for e in tally["errors"]:
        lines.append(f"  error: {e}")
    return "\n".join(lines)


# -- the command ------------------------------------------------------------------------------
def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("gunicorn exited at start (is the port free?)")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start listening")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def seed(assessors: int) -> tuple[int, list[str]]:
    """One collection, one question (3 synsets, 40 candidates), ``assessors`` assessors."""
    from django.contrib.auth import get_user_model

    sys.path.insert(0, str(ROOT))
    from tests.factories import add_member, make_collection, make_question

    c = make_collection(slug="race", name="Race")
    q = make_question(
        collection=c,
        qid="R1",
        text="Cities of France?",
        synsets=[[("Paris", "S")], [("Lyon", "A")], [("Nice", "B")]],
        unjudged=[f"city {i}" for i in range(40)],
    )
    names = [f"assessor{i}" for i in range(1, assessors + 1)]
    for name in names:
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        add_member(collection=c, user=user, role="assessor")
        q.assessors.add(user)
    return q.pk, names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2500)
    ap.add_argument("--assessors", type=int, default=2)
    ap.add_argument("--threads", type=int, default=8, help="client threads per assessor")
    ap.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument("--gthreads", type=int, default=4, help="threads per gunicorn worker")
    ap.add_argument("--port", type=int, default=8105)
    ap.add_argument("--database", default="qa_h5_race")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = ap.parse_args()

    log = Path(f"/tmp/judge_race_{args.port}.log")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DATABASE_URL": f"{PG}/{args.database}",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_CONN_MAX_AGE": "60",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    gunicorn = None
    _admin(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{args.database}"')
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        from annotate.models import JudgmentEvent, Question

        call_command("migrate", verbosity=0, interactive=False)
        call_command("createcachetable", verbosity=0)
        call_command("collectstatic", verbosity=0, interactive=False)
        qpk, names = seed(args.assessors)
        events_before = JudgmentEvent.objects.filter(question_id=qpk).count()
        version_before = Question.objects.get(pk=qpk).version
        connections.close_all()
        gunicorn = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "-w",
                str(args.workers),
                "-k",
                "gthread",
                "--threads",
                str(args.gthreads),
                "-b",
                f"127.0.0.1:{args.port}",
                "--timeout",
                "60",
                "--graceful-timeout",
                "10",
                "--preload",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=open(log, "w"),
            stderr=subprocess.STDOUT,
        )
        _wait_for_port(args.port, gunicorn)
        print(
            f"gunicorn: {args.workers} workers x {args.gthreads} threads on "
            f"127.0.0.1:{args.port}; database {args.database}"
        )
        tally = race(
            base=f"http://127.0.0.1:{args.port}",
            question=qpk,
            usernames=names,
            password=PASSWORD,
            threads=args.threads,
            requests=args.requests,
        )
        _stop(gunicorn)
        gunicorn = None
        checks = verify(
            question=qpk, events_before=events_before, version_before=version_before, tally=tally
        )
        print(report(tally, checks, users=args.assessors, threads=args.threads))
        print("result: " + ("PASS" if checks["ok"] else "FAIL"))
        return 0 if checks["ok"] else 1
    finally:
        if gunicorn is not None:
            _stop(gunicorn)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # Django may not be set up yet
            pass
        if not args.keep:
            _admin(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        if log.exists() and log.stat().st_size:
            print(f"gunicorn log (last lines, {log}):\n" + log.read_text()[-2000:])


if __name__ == "__main__":
    sys.exit(main())
