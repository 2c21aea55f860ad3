"""Locust users for bench/load.py (not run on its own: load.py writes the config it reads).

Assessors log in, open their next question and judge its candidates through the workspace
(htmx POSTs to ``questions/<pk>/act/``) -- into an existing synset, a new synset, incorrect,
a level change, now and then a merge or an undo -- then "done & next".  Every write the
server acknowledges is applied to a client-side model of the question, which must equal the
state the response shows; at the end every model is written to the results file so load.py
can compare it with the database.  Participants upload run files and open compare pages.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import uuid

from locust import FastHttpUser, between, events, task
from locust.stats import StatsEntry

CONFIG = json.loads(open(os.environ["LOAD_CONFIG"]).read())
HTMX = {"HX-Request": "true"}
WRITE_NAMES = (
    "act: add",
    "act: new",
    "act: incorrect",
    "act: level",
    "act: merge",
    "act: undo",
    "act: done",
)

_assessor_no = itertools.count(1)
_participant_no = itertools.count(1)
# question pk -> {"strings": {string pk: token}, "writes": acknowledged writes, ...}
MODELS: dict[int, dict] = {}
UPLOADS: list[dict] = []
ANOMALIES: list[str] = []

RE_VERSION = re.compile(r'id="workspace"[^>]*data-version="(\d+)"')
RE_ITEM = re.compile(
    r'<li class="item (cand|wrong|member)"[^>]*data-id="(\d+)" '
    r'data-token="([^"]+)"'
)
RE_SYNSET = re.compile(r'data-synset="(\d+)" data-ordinal="(\d+)"')
RE_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
RE_NOTICE = re.compile(r'class="msg msg-(\w+) notice"[^>]*>([^<]*)')
RE_QUESTION = re.compile(r"/questions/(\d+)/judge/")


def parse_workspace(html: str) -> dict | None:
    m = RE_VERSION.search(html)
    if m is None:
        return None
    notice = RE_NOTICE.search(html)
    return {
        "version": int(m.group(1)),
        "strings": {int(pk): token for _, pk, token in RE_ITEM.findall(html)},
        "synsets": {int(pk): int(o) for pk, o in RE_SYNSET.findall(html)},
        "csrf": (RE_CSRF.search(html) or [None, None])[1],
        "notice": notice.group(2).strip() if notice else "",
    }


class Assessor(FastHttpUser):
    fixed_count = int(CONFIG["assessors"])
    wait_time = between(CONFIG["think_min"], CONFIG["think_max"])

    def on_start(self):
        n = next(_assessor_no)
        self.username = CONFIG["assessor_names"][(n - 1) % len(CONFIG["assessor_names"])]
        self.levels: dict[str, int] = CONFIG["levels"]
        self.qpk = None
        self.ws = None
        self.undo: list[dict] = []  # before-states of this question's acknowledged writes
        login(self, self.username)
        self.next_question()

    # -- reads -----------------------------------------------------------------------------
    def next_question(self):
        with self.client.get(
            f"/queue/next/?collection={CONFIG['slug']}",
            name="next question",
            allow_redirects=False,
            catch_response=True,
        ) as r:
            m = RE_QUESTION.search(r.headers.get("Location") or "")
            if r.status_code != 302 or m is None:
                r.failure(f"no next question ({r.status_code})")
                self.qpk = None
                return
        self.open(int(m.group(1)))

    def open(self, pk: int):
        self.qpk, self.undo = pk, []
        with self.client.get(
            f"/questions/{pk}/judge/", name="workspace (page)", catch_response=True
        ) as r:
            ws = parse_workspace(r.text or "") if r.status_code == 200 else None
            if ws is None:
                r.failure(f"workspace not shown ({r.status_code})")
                self.qpk = None
                return
        self.ws = ws
        model = MODELS.setdefault(
            pk,
            {
                "writes": 0,
                "assessor": self.username,
                "strings": dict(ws["strings"]),
                "uncertain": False,
            },
        )
        if model["strings"] != ws["strings"]:
            ANOMALIES.append(f"q{pk}: page differs from the acknowledged state on reopening")

    # -- the judging loop ------------------------------------------------------------------
    @task
    def judge(self):
        if self.qpk is None:
            self.next_question()
            return
        ws = self.ws
        cands = [pk for pk, t in ws["strings"].items() if t == "u"]
        members = [pk for pk, t in ws["strings"].items() if "/" in t]
        synsets = sorted(ws["synsets"], key=ws["synsets"].get)
        level = random.choice(list(self.levels))
        roll = random.random()
        if roll < 0.05:
            with self.client.get(
                f"/questions/{self.qpk}/judge/",
                headers=HTMX,
                name="workspace (htmx)",
                catch_response=True,
            ) as r:
                fresh = parse_workspace(r.text or "") if r.status_code == 200 else None
                if fresh is None:
                    r.failure(f"workspace not shown ({r.status_code})")
                    return
            self.ws = fresh
            return
        if roll < 0.10 and self.undo:
            self.write("undo", {"op": "undo"}, dict(self.undo[-1]), undo=True)
            return
        if roll < 0.15 and len(synsets) >= 2:
            into, other = random.sample(synsets, 2)
            expected = {
                pk: (f"{into}/{t.split('/')[1]}" if t.split("/")[0] == str(other) else t)
                for pk, t in ws["strings"].items()
            }
            self.write(
                "merge", {"op": "merge", "ordinal": ws["synsets"][into], "merge": other}, expected
            )
            return
        if roll < 0.25 and members:
            s = random.choice(members)
            syn = ws["strings"][s].split("/")[0]
            self.write(
                "level",
                {"op": "level", "string": s, "level": level, "expect": ws["strings"][s]},
                {**ws["strings"], s: f"{syn}/{self.levels[level]}"},
            )
            return
        if not cands:
            self.done()
            return
        s = cands[0]  # most frequent first, as the page lists them
        kind = random.choices(["add", "new", "incorrect"], weights=[45, 25, 30])[0]
        if kind == "add" and not synsets:
            kind = "new"
        data = {"op": kind, "string": s, "expect": "u", "level": level}
        if kind == "add":
            target = random.choice(synsets)
            data["ordinal"] = ws["synsets"][target]
            token = f"{target}/{self.levels[level]}"
        elif kind == "new":
            token = f"?/{self.levels[level]}"  # the new synset's id comes with the answer
        else:
            token = "x"
        self.write(kind, data, {**ws["strings"], s: token})

    def write(self, kind: str, data: dict, expected: dict, undo: bool = False):
        """POST one operation; on an acknowledged write check the returned workspace
        against ``expected`` and record it in the question's model."""
        ws, pk, model = self.ws, self.qpk, MODELS[self.qpk]
        before = dict(ws["strings"])
        body = {**data, "version": ws["version"], "csrfmiddlewaretoken": ws["csrf"]}
        with self.client.post(
            f"/questions/{pk}/act/",
            data=body,
            headers=HTMX,
            name=f"act: {kind}",
            catch_response=True,
        ) as r:
            fresh = parse_workspace(r.text or "") if r.status_code == 200 else None
            if fresh is None:
                # not acknowledged: the write may or may not have happened
                model["uncertain"] = True
                r.failure(f"no workspace in the answer ({r.status_code})")
                self.qpk = None
                return
            if fresh["notice"] or fresh["version"] != ws["version"] + 1:
                r.failure(f"write refused: {fresh['notice'][:80]!r}")
                ANOMALIES.append(f"q{pk} {kind}: refused ({fresh['notice'][:80]})")
                model["strings"] = dict(fresh["strings"])
                self.ws = fresh
                return
            got = fresh["strings"]
            ok = set(got) == set(expected) and all(
                got[k] == t
                or (
                    t.startswith("?/")
                    and got[k].endswith(t[1:])
                    and got[k].split("/")[0] not in {str(x) for x in ws["synsets"]}
                )
                for k, t in expected.items()
            )
            if not ok:
                r.failure("acknowledged state differs from the expected one")
                ANOMALIES.append(f"q{pk} {kind}: expected {expected}, got {got}")
        model["writes"] += 1
        model["strings"] = dict(got)
        if undo:
            self.undo.pop()
        else:
            self.undo.append(before)
        self.ws = fresh

    def done(self):
        ws, pk, model = self.ws, self.qpk, MODELS[self.qpk]
        body = {"op": "done", "version": ws["version"], "csrfmiddlewaretoken": ws["csrf"]}
        with self.client.post(
            f"/questions/{pk}/act/", data=body, headers=HTMX, name="act: done", catch_response=True
        ) as r:
            if r.status_code != 204 or not r.headers.get("HX-Redirect"):
                model["uncertain"] = True
                r.failure(f"done not acknowledged ({r.status_code})")
                self.qpk = None
                return
            m = RE_QUESTION.search(r.headers["HX-Redirect"])
        model["writes"] += 1
        model["done"] = True
        if m is None:
            self.qpk = None  # nothing left to judge
            return
        self.open(int(m.group(1)))


class Participant(FastHttpUser):
    fixed_count = int(CONFIG["participants"])
    wait_time = between(CONFIG["participant_think_min"], CONFIG["participant_think_max"])

    def on_start(self):
        n = next(_participant_no)
        self.username = CONFIG["participant_names"][(n - 1) % len(CONFIG["participant_names"])]
        self.runs = list(CONFIG["run_ids"])
        self.uploaded = 0
        login(self, self.username)

    @task(3)
    def compare(self):
        a, b = random.sample(self.runs, 2)
        with self.client.get(
            f"/collections/{CONFIG['slug']}/compare/?a={a}&b={b}",
            name="compare",
            catch_response=True,
        ) as r:
            if r.status_code != 200 or "Q-measure" not in (r.text or ""):
                r.failure(f"compare page not shown ({r.status_code})")

    @task(1)
    def upload(self):
        url = f"/collections/{CONFIG['slug']}/runs/upload/"
        with self.client.get(url, name="upload page", catch_response=True) as r:
            m = RE_CSRF.search(r.text or "")
            if r.status_code != 200 or m is None:
                r.failure(f"upload page not shown ({r.status_code})")
                return
        self.uploaded += 1
        name = f"{self.username}-{self.uploaded}-{uuid.uuid4().hex[:6]}"
        boundary = uuid.uuid4().hex
        parts = [
            (f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n').encode()
            for k, v in (
                ("csrfmiddlewaretoken", m.group(1)),
                ("name", name),
                ("description", "load test"),
                ("format", ""),
            )
        ]
        parts.append(
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="{name}.tsv"\r\nContent-Type: text/tab-separated-values'
                "\r\n\r\n"
            ).encode()
            + run_file()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        with self.client.post(
            url,
            data=b"".join(parts),
            name="run upload",
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            allow_redirects=False,
            catch_response=True,
        ) as r:
            found = re.search(r"/runs/(\d+)/", r.headers.get("Location") or "")
            if r.status_code != 302 or found is None:
                r.failure(f"run not accepted ({r.status_code})")
                UPLOADS.append({"name": name, "acknowledged": False})
                return
        run_id = int(found.group(1))
        UPLOADS.append(
            {"name": name, "acknowledged": True, "id": run_id, "answers": CONFIG["run_answers"]}
        )
        self.runs.append(run_id)


def run_file() -> bytes:
    """A QA run over every question: L' answers each, drawn from the question's strings
    and some new ones."""
    lines = []
    for qid, texts in CONFIG["run_texts"].items():
        picks = random.sample(texts, min(len(texts), CONFIG["max_output"] - 1))
        picks.append(f"guess {random.randint(1, 50)}")
        lines += [f"{qid}\t{r}\t{t}" for r, t in enumerate(picks, start=1)]
    return ("\n".join(lines) + "\n").encode()


def login(user: FastHttpUser, username: str):
    with user.client.get("/accounts/login/", name="login page", catch_response=True) as r:
        m = RE_CSRF.search(r.text or "")
        if m is None:
            r.failure(f"no login form ({r.status_code})")
            return
    body = {"username": username, "password": CONFIG["password"], "csrfmiddlewaretoken": m.group(1)}
    with user.client.post(
        "/accounts/login/", data=body, name="login", allow_redirects=False, catch_response=True
    ) as r:
        if r.status_code != 302:
            r.failure(f"login refused ({r.status_code})")


WARMUP: dict[str, list[float]] = {}


@events.request.add_listener
def _keep_warmup(name, response_time, **kw):
    # logins happen while users spawn; load.py resets the stats once all have spawned, so
    # their times are kept here to be reported apart
    if name in ("login page", "login", "next question"):
        WARMUP.setdefault(name, []).append(response_time)


@events.quitting.add_listener
def _write_results(environment, **kw):
    stats = {}
    for name, times in WARMUP.items():
        times = sorted(times)
        stats[f"warm-up: {name}"] = {
            "requests": len(times),
            "failures": 0,
            "rps": 0.0,
            "avg": sum(times) / len(times),
            **{
                f"p{p}": times[min(len(times) - 1, int(len(times) * p / 100))] for p in (50, 95, 99)
            },
            "max": times[-1],
        }
    judging = StatsEntry(environment.stats, "judging actions (all act: writes)", "POST")
    for (name, method), e in sorted(environment.stats.entries.items()):
        stats[f"{method} {name}"] = entry_dict(e)
        if name in WRITE_NAMES:
            judging.extend(e)
    stats["judging actions (all act: writes)"] = entry_dict(judging)
    total = environment.stats.total
    stats["total"] = entry_dict(total)
    errors = [
        {"name": e.name, "method": e.method, "error": str(e.error), "occurrences": e.occurrences}
        for e in environment.stats.errors.values()
    ]
    with open(CONFIG["results"], "w") as f:
        json.dump(
            {
                "stats": stats,
                "errors": errors,
                "models": MODELS,
                "uploads": UPLOADS,
                "anomalies": ANOMALIES[:200],
                "n_anomalies": len(ANOMALIES),
                "duration": total.last_request_timestamp - total.start_time
                if total.last_request_timestamp
                else 0,
            },
            f,
        )


def entry_dict(e: StatsEntry) -> dict:
    return {
        "requests": e.num_requests,
        "failures": e.num_failures,
        "rps": e.total_rps,
        "avg": e.avg_response_time,
        "p50": e.get_response_time_percentile(0.5),
        "p95": e.get_response_time_percentile(0.95),
        "p99": e.get_response_time_percentile(0.99),
        "max": e.max_response_time,
    }
