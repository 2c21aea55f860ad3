"""The campaign bench (issue 24 item 6): every heavy operation of a campaign of size S, M
or L done through the pages and the API, as people do it, against a real server and a
real job worker, with what each cost.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h1_campaign \\
        .venv/bin/python bench/campaign.py --size S --seed 1 [--ops OP,...] [--json FILE]

The campaign is ``bench/campaign_data.py``'s (built once on the configured database, then
found by its slug; the database is migrated first).  The bench starts gunicorn
(``config.wsgi``, ``--workers`` sync workers, its 30 s timeout, production settings, as
README's "A real deployment") and one ``manage.py jobs_worker`` on the database queue
(``JOBS_QUEUE=database``), logs in as the campaign's organizer, assessor and first
participant through the login page, and does, in this order (``--ops`` picks some; the
operations marked * write, and so work on a copy of the campaign made by the archive
import, which is deleted at the end, so the campaign stays as built; ``--in-place``: on the
campaign itself, which they change, with no copy):

- ``archive``: Export archive of the campaign (its page's POST, the job, the download),
  then Import archive of that zip as a new collection (the copy);
- ``reliability`` *: the reliability page's Compute button (B = 1,000, every run), the job,
  the page with the report;
- ``judgments``: a new collection (the New collection page), the campaign's questions.csv
  and judgments.csv downloaded from its export links and imported into it (the import
  page's preview, then its confirm: a job for a large file);
- ``upload`` *: one run of the campaign's size (run001's answers as a TSV) uploaded by the
  participant through the upload page, then another through ``POST /api/collections/
  {slug}/runs`` (202, then ``GET /api/jobs/{id}`` until it ends), then the run's page;
- ``pool`` *: "Send to pool" of one run, then of all runs;
- ``mode`` *: the Matching mode page to exact, then back to normalized;
- ``layers`` *: a layer request (k = 2, the assessor and the organizer) over every question;
- ``pages``: the runs list and runs.csv, a run's page, the comparison, the ranking page
  and its matrix CSV, the collection page, the dashboard and the judging page on the
  campaign (``pages_bench.pages``), per role: ``--cold`` first views (each right after a
  judgment, so every score is out of date) and ``--repeats`` warm ones.

A job's page polls ``/jobs/{id}/status/`` every second as the browser does; the bench
watches the Job row and stops the clock when the job has ended.  Per operation it prints
the wall time (first request to the job's end and the page after it), the CPU seconds of
the server's processes and of the worker (from /proc: utime + stime; a process that exits
meanwhile loses its share), the CPU of the database backends of this database (read
every half second while a job runs: approximate), the job's own duration
(``started_at`` to ``finished_at``), the peak RSS of the largest server process and of the
worker during the operation (``VmHWM``, reset through ``/proc/PID/clear_refs``), the number
of requests and the slowest one, and under it the statements seen running a second or
more in the database (``pg_stat_activity``, read with the backends).  Every request over
2 s is listed at the end, loudly, and the issue's targets (for M, on a quiet machine) are
checked.  The processes are stopped on exit, on Ctrl-C and on SIGTERM too.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OPS = ("archive", "reliability", "judgments", "upload", "pool", "mode", "layers", "pages")
DEFAULT_OPS = ("archive", "reliability", "judgments", "upload", "pool", "mode", "pages")
ON_COPY = {"reliability", "upload", "pool", "mode", "layers"}
SLOW_REQUEST = 2.0  # seconds: a request slower than this is flagged
# issue 24 item 5's targets (size M and the 5,610-question case, a quiet machine), seconds
TARGETS = {
    "judgments import": 5.0,
    "run upload (page)": 1.0,
    "run upload (API)": 1.0,
    "pool all runs": 10.0,
    "mode -> exact": 10.0,
    "mode -> normalized": 10.0,
    "archive export + import": 30.0,
    "reliability (Compute)": 30.0,
}
PAGE_TARGET = 0.3
RE_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
RE_TOKEN = re.compile(r'name="token" value="([^"]+)"')
CLK = os.sysconf("SC_CLK_TCK")


# -- processes ----------------------------------------------------------------------------
def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds: utime + stime) of ``pid``, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK


def _tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (s := _stat(int(entry))) is not None:
            parents[int(entry)] = s[0]
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in parents or pid == root:
            out.append(pid)
            todo += [p for p, pp in parents.items() if pp == pid]
    return out


def _hwm_mb(pid: int) -> float:
    """Peak RSS of ``pid`` since its last reset, in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _reset_hwm(pid: int) -> None:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """The server (gunicorn) and the job worker, each in its own process group."""

    def __init__(self, env: dict, workers: int, logdir: Path):
        self.env, self.workers, self.logdir = env, workers, logdir
        self.port = free_port()
        self.server: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None

    def start(self) -> None:
        common = {"cwd": ROOT, "env": self.env, "stderr": subprocess.STDOUT}
        self.server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "-w",
                str(self.workers),
                "-b",
                f"127.0.0.1:{self.port}",
                "--worker-tmp-dir",
                "/dev/shm",
                "--access-logfile",
                str(self.logdir / "access.log"),
                "--access-logformat",
                "%(m)s %(U)s %(s)s %(L)s",
            ],
            stdout=open(self.logdir / "server.log", "w"),
            start_new_session=True,
            **common,
        )
        self.worker = subprocess.Popen(
            [sys.executable, "manage.py", "jobs_worker"],
            stdout=open(self.logdir / "worker.log", "w"),
            start_new_session=True,
            **common,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for name, proc in (("gunicorn", self.server), ("jobs_worker", self.worker)):
                if proc.poll() is not None:
                    log = self.logdir / ("server.log" if proc is self.server else "worker.log")
                    raise SystemExit(f"{name} exited at start:\n{log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("gunicorn did not start listening")

    def pids(self) -> dict[str, list[int]]:
        return {
            "server": _tree(self.server.pid) if self.server else [],
            "worker": _tree(self.worker.pid) if self.worker else [],
        }

    def stop(self) -> None:
        """SIGTERM to each group (twice for the worker: the second stops a job at once),
        SIGKILL for what is left after 15 s."""
        procs = [p for p in (self.server, self.worker) if p is not None and p.poll() is None]
        for proc in procs:
            for _ in range(2 if proc is self.worker else 1):
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                time.sleep(0.2)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self.server = self.worker = None


class Meter:
    """CPU seconds and peak RSS of the server and the worker, and the CPU of this
    database's backends, over one operation (a backend is read whenever ``sample`` is
    called, as the bench waits for a job, so one that ends with its job still counts up
    to its last reading)."""

    current: Meter | None = None  # the meter of the operation under way

    def __init__(self, procs: Processes):
        self.procs = procs
        self.seen: dict[int, float] = {}
        self.sampled = 0.0

    def _backends(self) -> dict[int, float]:
        from django.db import connection

        with connection.cursor() as cur:
            cur.execute(
                "SELECT pid, state = 'active', "
                "EXTRACT(EPOCH FROM clock_timestamp() - query_start), query "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
            rows = cur.fetchall()
        for pid, active, age, query in rows:
            # the statements running a second or more: what a slow job waits for
            if active and age is not None and age >= 1.0:
                key = (pid, " ".join(query.split())[:160])
                self.statements[key] = max(self.statements.get(key, 0.0), float(age))
        return {r[0]: s[1] for r in rows if (s := _stat(r[0])) is not None}

    def long_statements(self, n: int = 3) -> list[tuple[float, str]]:
        """The ``n`` longest statements seen running (seconds seen, its text; one line for
        a statement that several processes ran, as PostgreSQL's parallel workers do)."""
        longest: dict[str, float] = {}
        for (_, sql), age in self.statements.items():
            longest[sql] = max(longest.get(sql, 0.0), age)
        return sorted(((a, q) for q, a in longest.items()), reverse=True)[:n]

    def start(self) -> None:
        self.statements: dict[tuple[int, str], float] = {}
        self.pids = self.procs.pids()
        for pids in self.pids.values():
            for pid in pids:
                _reset_hwm(pid)
        self.cpu0 = {pid: _stat(pid) for pids in self.pids.values() for pid in pids}
        self.db0 = self._backends()
        self.seen = dict(self.db0)
        Meter.current = self

    def sample(self, every: float = 0.5) -> None:
        """Read the database backends' CPU (at most every ``every`` seconds)."""
        if time.monotonic() - self.sampled >= every:
            self.sampled = time.monotonic()
            self.seen.update(self._backends())

    def stop(self) -> dict[str, float]:
        now = self.procs.pids()
        out = {}
        for role, pids in now.items():
            cpu = 0.0
            for pid in pids:
                s = _stat(pid)
                if s is None:
                    continue
                before = self.cpu0.get(pid)
                cpu += s[1] - (before[1] if before else 0.0)
            out[f"cpu_{role}"] = cpu
            out[f"rss_{role}"] = max((_hwm_mb(pid) for pid in pids), default=0.0)
        self.seen.update(self._backends())
        out["cpu_db"] = sum(v - self.db0.get(p, 0.0) for p, v in self.seen.items())
        Meter.current = None
        return out


# -- the browser --------------------------------------------------------------------------
@dataclass
class Request:
    op: str
    method: str
    path: str
    status: int
    seconds: float


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """One person's session (cookies, the CSRF token); every request is timed and kept."""

    def __init__(self, base: str, log: list[Request], name: str):
        self.base, self.log, self.name = base, log, name
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()
        )
        self.op = "setup"
        self.token = ""  # an API token (Authorization: Bearer)

    def csrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def request(
        self,
        method: str,
        path: str,
        *,
        data: dict | None = None,
        files: dict | None = None,
        headers: dict | None = None,
        api: bool = False,
    ) -> tuple[int, dict, bytes]:
        """(status, headers, body) of one request; redirects are not followed."""
        headers = dict(headers or {})
        body = None
        if files:
            boundary = secrets.token_hex(16)
            body = _multipart(boundary, data or {}, files)
            headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        elif data is not None:
            body = urllib.parse.urlencode(data, doseq=True).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if api:
            headers["Authorization"] = f"Bearer {self.token}"
        elif method == "POST":
            headers["X-CSRFToken"] = self.csrf()
            headers["Referer"] = self.base + path
        req = urllib.request.Request(self.base + path, data=body, headers=headers, method=method)
        t = time.perf_counter()
        try:
            with self.opener.open(req, timeout=900) as r:
                status, hdrs, content = r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, content = e.code, dict(e.headers), e.read()
        except OSError as e:  # the server closed the connection (a 413 before the body)
            self.log.append(Request(self.op, method, path.split("?")[0], 0, 0.0))
            raise OperationFailed(f"{method} {path.split('?')[0]}: no answer ({e})") from e
        seconds = time.perf_counter() - t
        self.log.append(Request(self.op, method, path.split("?")[0], status, seconds))
        return status, hdrs, content

    def get(self, path: str, **kw) -> tuple[int, dict, bytes]:
        return self.request("GET", path, **kw)

    def post(self, path: str, data: dict | None = None, **kw) -> tuple[int, dict, bytes]:
        return self.request("POST", path, data=data or {}, **kw)

    def login(self, username: str, password: str) -> None:
        status, _, page = self.get("/accounts/login/")
        assert status == 200, status
        csrf = RE_CSRF.search(page.decode()).group(1)
        status, _hdrs, _ = self.post(
            "/accounts/login/",
            {"username": username, "password": password, "csrfmiddlewaretoken": csrf},
        )
        assert status == 302, f"login of {username} failed ({status})"


def _multipart(boundary: str, data: dict, files: dict) -> bytes:
    out = []
    for k, v in data.items():
        out.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        )
    for k, (filename, content) in files.items():
        out.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
        )
        out.append(content + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out)


def warm_up(procs: Processes, base: str, rounds: int = 20) -> None:
    """Requests to the login page, several at once, until every server worker has
    answered one (each loads the URLconf and the views at its first request: seconds
    that belong to no operation).  Not timed."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> None:
        try:
            urllib.request.urlopen(base + "/accounts/login/", timeout=120).read()
        except OSError:
            pass

    master = procs.server.pid
    for _ in range(rounds):
        with ThreadPoolExecutor(2 * procs.workers) as pool:
            list(pool.map(one, range(2 * procs.workers)))
        workers = [p for p in _tree(master) if p != master]
        # a worker that has answered has spent a second or more importing the views
        if workers and all((_stat(p) or (0, 0.0))[1] > 0.8 for p in workers):
            return


# -- operations ---------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    wall: float = 0.0
    cpu_server: float = 0.0
    cpu_worker: float = 0.0
    cpu_db: float = 0.0
    job: float | None = None
    job_status: str = ""
    rss_server: float = 0.0
    rss_worker: float = 0.0
    requests: int = 0
    slowest: float = 0.0
    slowest_request: str = ""
    statements: list = field(default_factory=list)  # [(seconds seen running, SQL)]
    note: str = ""


@dataclass
class PageRow:
    name: str
    role: str
    cold: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    # after a cold view answered 202 (the scores job's page): seconds until the page
    # answered 200, as the browser's page reloads itself when the job has stored them
    ready: list[float] = field(default_factory=list)


class Bench:
    def __init__(self, procs: Processes, log: list[Request]):
        self.procs, self.log = procs, log
        self.meter = Meter(procs)
        self.rows: list[Row] = []
        self.pages: list[PageRow] = []

    def measure(self, name: str, browsers: list[Browser], fn) -> Row:
        """Run ``fn`` (which returns the job it waited for, or None) as the operation
        ``name`` and keep its row."""
        for b in browsers:
            b.op = name
        first = len(self.log)
        self.meter.start()
        t = time.perf_counter()
        note = ""
        try:
            job = fn()
        except OperationFailed as e:
            job, note = None, f"FAILED: {e}"
        except Exception as e:  # a bench error: say so, and go on with the others
            traceback.print_exc()
            job, note = None, f"FAILED: {type(e).__name__}: {e}"
        wall = time.perf_counter() - t
        m = self.meter.stop()
        reqs = self.log[first:]
        slow = max(reqs, key=lambda r: r.seconds, default=None)
        row = Row(
            name=name,
            wall=wall,
            cpu_server=m["cpu_server"],
            cpu_worker=m["cpu_worker"],
            cpu_db=m["cpu_db"],
            rss_server=m["rss_server"],
            rss_worker=m["rss_worker"],
            requests=len(reqs),
            slowest=slow.seconds if slow else 0.0,
            slowest_request=f"{slow.method} {slow.path} {slow.status}" if slow else "",
            note=note,
        )
        if job is not None:
            row.job_status = job.status
            if job.started_at and job.finished_at:
                row.job = (job.finished_at - job.started_at).total_seconds()
            if job.status != "succeeded" and not row.note:
                row.note = f"job {job.status}: {job.message[:120]}"
        self.rows.append(row)
        row.statements = self.meter.long_statements()
        print(format_row(row), flush=True)
        for seconds, sql in row.statements:
            print(f"    db: a statement seen running {seconds:.1f} s: {sql}", flush=True)
        return row


class OperationFailed(Exception):
    pass


def newest_job(user, since: float):
    """The newest job ``user`` started after ``since`` (a time.time()), or None."""
    from datetime import UTC, datetime

    from jobs.models import Job

    return (
        Job.objects.filter(user=user, created_at__gte=datetime.fromtimestamp(since - 1, UTC))
        .defer("input")
        .order_by("-id")
        .first()
    )


def follow(browser: Browser, job, *, api: bool = False, poll: float = 1.0):
    """Poll the job's status as its page does (every ``poll`` seconds) until it ends;
    the Job row is watched every 0.05 s so the clock stops when it ends."""
    from jobs.models import Job

    path = f"/api/jobs/{job.pk}" if api else f"/jobs/{job.pk}/status/"
    last = 0.0
    while True:
        job = Job.objects.defer("input").get(pk=job.pk)
        if job.status not in ("queued", "running"):
            return job
        if Meter.current is not None:
            Meter.current.sample()
        if time.monotonic() - last >= poll:
            last = time.monotonic()
            status, _, _ = browser.get(path, api=api) if api else browser.get(path)
            if status != 200:
                raise OperationFailed(f"{path} answered {status}")
        time.sleep(0.05)


def started(browser: Browser, user, since: float, status: int, hdrs: dict, body: bytes):
    """The job a POST started (None if it started none), followed to its end."""
    if status >= 400:
        raise OperationFailed(f"answered {status}: {_text(body)[:300]}")
    job = newest_job(user, since)
    if job is None:
        return None
    return follow(browser, job)


def _text(body: bytes) -> str:
    text = re.sub(r"<[^>]+>", " ", body.decode(errors="replace"))
    return " ".join(text.split())


def op_archive(bench: Bench, b: Browser, user, slug: str, copy: str, workdir: Path) -> None:
    from jobs.models import JobOutput

    def export():
        since = time.time()
        status, hdrs, body = b.post(f"/collections/{slug}/archive/")
        job = started(b, user, since, status, hdrs, body)
        if job is None or job.status != "succeeded":
            return job
        b.get(f"/jobs/{job.pk}/")  # the panel with the download link
        output = JobOutput.objects.filter(job=job).values_list("pk", flat=True).first()
        status, _, data = b.get(f"/jobs/{job.pk}/files/{output}/")
        if status != 200:
            raise OperationFailed(f"download answered {status}")
        (workdir / "archive.zip").write_bytes(data)
        return job

    e = bench.measure("archive export", [b], export)
    path = workdir / "archive.zip"
    if e.note or not path.exists():
        raise OperationFailed("no archive to import")
    e.note = f"{path.stat().st_size / 1048576:.1f} MB archive"

    def import_():
        since = time.time()
        status, hdrs, body = b.post(
            "/archives/import/",
            {"slug": copy, "name": f"Copy of {slug}"},
            files={"file": (f"{slug}.zip", path.read_bytes())},
        )
        if status == 200:  # the form again: refused
            raise OperationFailed(_text(body)[-400:])
        job = started(b, user, since, status, hdrs, body)
        b.get(f"/collections/{copy}/")
        return job

    bench.measure("archive import", [b], import_)


def op_reliability(bench: Bench, b: Browser, user, slug: str, trials: int) -> None:
    def compute():
        since = time.time()
        status, hdrs, body = b.post(
            f"/collections/{slug}/reliability/compute/", {"trials": trials, "seed": 0}
        )
        if status not in (302, 200):
            raise OperationFailed(f"compute answered {status}: {_text(body)[:300]}")
        page = hdrs.get("Location", f"/collections/{slug}/reliability/")
        b.get(page)
        job = newest_job(user, since)
        if job is not None:
            job = follow(b, job)
        status, _, body = b.get(page)
        if status != 200:
            raise OperationFailed(f"the page answered {status}")
        return job

    bench.measure("reliability (Compute)", [b], compute)


def op_judgments(bench: Bench, b: Browser, user, slug: str, target: str) -> None:
    from annotate.models import Collection

    Collection.objects.filter(slug=target).delete()
    status, _, _page = b.get("/collections/new/")
    status, _hdrs, body = b.post(
        "/collections/new/",
        {
            "name": f"Judgments of {slug}",
            "slug": target,
            "description": "",
            "guidelines": "",
            "matching_mode": "normalized",
            "max_output_size": 10,
            "levels-TOTAL_FORMS": 3,
            "levels-INITIAL_FORMS": 0,
            "levels-MIN_NUM_FORMS": 0,
            "levels-MAX_NUM_FORMS": 1000,
            **{
                f"levels-{i}-{k}": v
                for i, (code, gain) in enumerate([("S", 3), ("A", 2), ("B", 1)])
                for k, v in (("code", code), ("label", code), ("gain", gain), ("examples", ""))
            },
        },
    )
    if status != 302:
        raise OperationFailed(f"new collection answered {status}: {_text(body)[:400]}")

    def download(what: str) -> bytes:
        status, _, data = b.get(f"/collections/{slug}/export/{what}.csv")
        if status != 200:
            raise OperationFailed(f"{what}.csv answered {status}")
        return data

    files: dict[str, bytes] = {}
    bench.measure(
        "export questions+judgments CSV",
        [b],
        lambda: files.update(questions=download("questions"), judgments=download("judgments")),
    )

    def import_(kind: str):
        def go():
            status, _, page = b.post(
                f"/collections/{target}/import/",
                {"kind": kind},
                files={"file": (f"{kind}.csv", files[kind])},
            )
            found = RE_TOKEN.search(page.decode())
            if status != 200 or not found:
                raise OperationFailed(f"preview {status}: {_text(page)[-400:]}")
            since = time.time()
            status, hdrs, body = b.post(
                f"/collections/{target}/import/confirm/", {"token": found.group(1)}
            )
            job = started(b, user, since, status, hdrs, body)
            b.get(f"/collections/{target}/")
            return job

        return go

    bench.measure("questions import", [b], import_("questions"))
    row = bench.measure("judgments import", [b], import_("judgments"))
    rows = files["judgments"].count(b"\n") - 1
    row.note = row.note or f"{rows:,} rows"


def run_file(collection_id: int) -> bytes:
    """The answers of the collection's first run as a QA TSV (question_id, rank, answer,
    score): a run of the campaign's size."""
    from evaluation.models import Run, RunAnswer

    run = Run.objects.active().filter(collection_id=collection_id).order_by("name").first()
    rows = (
        RunAnswer.objects.filter(run=run)
        .order_by("question__qid", "rank")
        .values_list("question__qid", "rank", "text")
    )
    return "".join(f"{q}\t{r}\t{t}\t{100 - r}\n" for q, r, t in rows).encode()


def op_upload(bench: Bench, b: Browser, user, slug: str, data: bytes) -> None:
    from api.services import api_token_create, api_token_revoke
    from evaluation.models import Run

    stamp = secrets.token_hex(3)

    def page():
        since = time.time()
        status, hdrs, body = b.post(
            f"/collections/{slug}/runs/upload/",
            {"name": f"page-{stamp}", "description": "campaign bench", "format": ""},
            files={"file": ("run.tsv", data)},
        )
        if status == 200:
            raise OperationFailed(_text(body)[-400:])
        job = started(b, user, since, status, hdrs, body)
        run = Run.objects.filter(collection__slug=slug, name=f"page-{stamp}").first()
        if run is not None:
            b.get(f"/collections/{slug}/runs/{run.pk}/")
        return job

    row = bench.measure("run upload (page)", [b], page)
    lines = data.count(b"\n")
    row.note = row.note or f"{lines:,} lines"
    token = api_token_create(user=user, name=f"campaign bench {stamp}")
    b.token = token.secret

    def api():
        status, _hdrs, body = b.post(
            f"/api/collections/{slug}/runs",
            {"name": f"api-{stamp}", "format": ""},
            files={"file": ("run.tsv", data)},
            api=True,
        )
        if status != 202:
            raise OperationFailed(f"API answered {status}: {body[:300]!r}")
        from jobs.models import Job

        job = Job.objects.defer("input").get(pk=json.loads(body)["id"])
        return follow(b, job, api=True)

    try:
        bench.measure("run upload (API)", [b], api)
    finally:
        api_token_revoke(user=user, token_id=token.token.pk)


def op_pool(bench: Bench, b: Browser, user, slug: str) -> None:
    from evaluation.models import Run

    run = Run.objects.active().filter(collection__slug=slug).order_by("name").first()

    def post(path: str, after: str):
        def go():
            since = time.time()
            status, hdrs, body = b.post(path)
            job = started(b, user, since, status, hdrs, body)
            b.get(after)
            return job

        return go

    bench.measure(
        "pool one run",
        [b],
        post(f"/collections/{slug}/runs/{run.pk}/pool/", f"/collections/{slug}/runs/{run.pk}/"),
    )
    bench.measure(
        "pool all runs", [b], post(f"/collections/{slug}/runs/pool/", f"/collections/{slug}/runs/")
    )


def op_mode(bench: Bench, b: Browser, user, slug: str) -> None:
    for mode in ("exact", "normalized"):

        def go(mode=mode):
            b.get(f"/collections/{slug}/matching-mode/")
            since = time.time()
            status, hdrs, body = b.post(
                f"/collections/{slug}/matching-mode/", {"matching_mode": mode}
            )
            if status == 200:
                raise OperationFailed(_text(body)[-400:])
            job = started(b, user, since, status, hdrs, body)
            b.get(f"/collections/{slug}/")
            return job

        bench.measure(f"mode -> {mode}", [b], go)


def op_layers(bench: Bench, b: Browser, user, slug: str, assessors: list[int]) -> None:
    def go():
        since = time.time()
        status, hdrs, body = b.post(
            f"/collections/{slug}/layers/request/",
            {"assessors": assessors, "k": 2, "scope": "all", "seed": 1},
        )
        job = started(b, user, since, status, hdrs, body)
        b.get(f"/collections/{slug}/agreement/")
        return job

    bench.measure("layer request (all, k=2)", [b], go)


def op_pages(
    bench: Bench, browsers: dict[str, Browser], campaign, cold: int, warm: int, only: set[str]
) -> None:
    from django.contrib.auth import get_user_model

    from bench.pages_bench import forget_scores, judge_once, pages

    organizer = get_user_model().objects.get(username=campaign.users["organizer"][0])
    for b in browsers.values():
        b.op = "pages"
    print(
        f"\n{'page':20} {'role':12} {'cold p50':>9} {'p95':>7} {'max':>7} | "
        f"{'warm p50':>9} {'p95':>7} {'max':>7}"
    )
    for name, url, roles in pages(campaign):
        if only and name not in only:
            continue
        for role in roles:
            b = browsers[role]
            row = PageRow(name, role)
            for _ in range(cold):
                judge_once(campaign.collection_id, organizer)
                forget_scores(campaign.collection_id)
                row.cold.append(_timed_get(b, url))
                if b.log[-1].status == 202:
                    row.ready.append(_until_ready(b, url))
            for _ in range(warm):
                row.warm.append(_timed_get(b, url))
            bench.pages.append(row)
            print(format_page(row), flush=True)


def _timed_get(b: Browser, url: str) -> float:
    status, _, _ = b.get(url)
    if status not in (200, 202):
        print(f"  !! {url} answered {status}")
    return b.log[-1].seconds


def _until_ready(b: Browser, url: str, timeout: float = 600.0) -> float:
    """Seconds from now until ``url`` answers 200 (asked every second, as the page that
    waits for its scores job polls), or ``timeout``."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        time.sleep(1.0)
        status, _, _ = b.get(url)
        if status == 200:
            break
    return time.perf_counter() - start


# -- the report ---------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    from bench.pages_bench import percentile as p

    return p(values, q) if values else float("nan")


HEADER = (
    f"{'operation':32} {'wall s':>7} {'job s':>7} {'cpu srv':>7} {'cpu wrk':>7} "
    f"{'cpu db':>7} {'RSS srv':>8} {'RSS wrk':>8} {'reqs':>5} {'slowest':>8}  note"
)


def format_row(r: Row) -> str:
    job = f"{r.job:7.2f}" if r.job is not None else "      -"
    flag = " !!>2s" if r.slowest > SLOW_REQUEST else ""
    return (
        f"{r.name:32} {r.wall:7.2f} {job} {r.cpu_server:7.2f} {r.cpu_worker:7.2f} "
        f"{r.cpu_db:7.2f} {r.rss_server:6.0f}MB {r.rss_worker:6.0f}MB {r.requests:5d} "
        f"{r.slowest:7.2f}s{flag}  {r.note}"
    )


def format_page(p: PageRow) -> str:
    def cols(xs: list[float]) -> str:
        if not xs:
            return f"{'-':>9} {'-':>7} {'-':>7}"
        return f"{percentile(xs, 0.5):9.3f} {percentile(xs, 0.95):7.3f} {max(xs):7.3f}"

    flag = ""
    if p.warm and percentile(p.warm, 0.95) >= PAGE_TARGET:
        flag += "  warm p95 >= 0.3 s"
    if max(p.cold + p.warm, default=0) > SLOW_REQUEST:
        flag += "  !! a request > 2 s"
    if p.ready:
        flag += f"  (202; scores ready after {max(p.ready):.1f} s)"
    return f"{p.name:20} {p.role:12} {cols(p.cold)} | {cols(p.warm)}{flag}"


def summary(bench: Bench, log: list[Request]) -> list[str]:
    """The closing lines: every request over 2 s, then the issue's targets."""
    lines = []
    slow = [r for r in log if r.seconds > SLOW_REQUEST]
    if slow:
        lines.append(f"!! {len(slow)} REQUEST(S) OVER {SLOW_REQUEST:.0f} s:")
        for r in sorted(slow, key=lambda r: -r.seconds)[:30]:
            lines.append(f"!!   {r.seconds:7.2f} s  {r.method} {r.path} -> {r.status}  ({r.op})")
    else:
        lines.append(f"no request over {SLOW_REQUEST:.0f} s ({len(log)} requests)")
    errors = [r for r in log if r.status >= 500]
    if errors:
        lines.append(
            f"!! {len(errors)} answer(s) >= 500: "
            + ", ".join(f"{r.method} {r.path} {r.status}" for r in errors[:10])
        )
    by = {r.name: r for r in bench.rows if not r.note.startswith("FAILED")}
    checks = []
    for name, limit in TARGETS.items():
        if name == "archive export + import":
            if "archive export" in by and "archive import" in by:
                value = by["archive export"].wall + by["archive import"].wall
                checks.append((name, value, limit))
        elif name in by:
            checks.append((name, by[name].wall, limit))
    if checks:
        lines.append("targets of issue 24 (wall time; they are for size M on a quiet machine):")
        for name, value, limit in checks:
            verdict = "met" if value < limit else "NOT met"
            lines.append(f"  {name:28} {value:8.2f} s  (< {limit:g} s: {verdict})")
    if bench.pages:
        worst = max(bench.pages, key=lambda p: percentile(p.warm, 0.95) if p.warm else 0)
        if worst.warm:
            p95 = percentile(worst.warm, 0.95)
            verdict = "met" if p95 < PAGE_TARGET else "NOT met"
            lines.append(
                f"  {'pages warm p95 (worst)':28} {p95:8.3f} s  (< {PAGE_TARGET} s: {verdict}; "
                f"{worst.name}, {worst.role})"
            )
    return lines


# -- main ---------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S", help="S, M, L or QxRxA (e.g. 50x4x5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--ops",
        default=",".join(DEFAULT_OPS),
        help=f"comma list of {', '.join(OPS)} (default: all but layers)",
    )
    ap.add_argument("--workers", type=int, default=4, help="gunicorn sync workers (4)")
    ap.add_argument("--trials", type=int, default=1000, help="reliability B (1000)")
    ap.add_argument("--cold", type=int, default=3, help="first views per page and role (3)")
    ap.add_argument("--repeats", type=int, default=10, help="warm views per page and role (10)")
    ap.add_argument(
        "--pages", default="", help="comma list of the page names to time (default: all)"
    )
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--keep-copy", action="store_true", help="keep the copy of the campaign")
    ap.add_argument(
        "--in-place",
        action="store_true",
        help="the writing operations work on the campaign itself, which they change (runs "
        "added, answers pooled): no copy, so no archive import unless asked for",
    )
    args = ap.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in ops if o not in OPS]
    if unknown:
        ap.error(f"unknown operation(s) {', '.join(unknown)}: one of {', '.join(OPS)}")
    args.ops = ops
    return args


def size_of(text: str):
    from bench.campaign_data import Size

    if "x" in text.lower():
        return Size(*(int(x) for x in text.lower().split("x")))
    return text.upper()


def server_env(database_url: str) -> dict:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_CONN_MAX_AGE": "60",
        "JOBS_QUEUE": "database",
        "PYTHONPATH": str(ROOT),
    }


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a PostgreSQL database (postgres://...)")
    env = server_env(url)
    os.environ.update(env)
    # this process builds the campaign and deletes the copy: statements longer than the web's
    os.environ["DJANGO_DB_STATEMENT_TIMEOUT_MS"] = "0"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,testserver"
    from bench.pages_bench import setup_django

    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotate.models import Collection
    from bench.campaign_data import build

    signal.signal(signal.SIGTERM, _terminate)
    t = time.perf_counter()
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    # the server's static files (this process's settings use plain static URLs)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    campaign = build(size_of(args.size), args.seed)
    how = "built" if campaign.built else "reused"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"# {campaign.slug} ({how} in {time.perf_counter() - t:.1f} s): "
        f"{len(campaign.question_ids):,} questions x {len(campaign.run_ids)} runs, "
        f"{campaign.answers:,} run answers; commit {commit}; {os.cpu_count()} cores; "
        f"load average {load} at start (other work on this machine included)"
    )
    User = get_user_model()
    users = {
        role: User.objects.get(username=campaign.users[role][0])
        for role in ("organizer", "assessor", "participant")
    }
    copy = campaign.slug if args.in_place else f"{campaign.slug}-copy"
    judged = f"{campaign.slug}-judgments"
    workdir = Path(tempfile.mkdtemp(prefix="campaign-bench-"))
    log: list[Request] = []
    procs = Processes(env, args.workers, workdir)
    bench = Bench(procs, log)
    interrupted = False
    try:
        # a run stopped earlier may have left them (never the campaign itself)
        Collection.objects.filter(slug__in=[f"{campaign.slug}-copy", judged]).delete()
        procs.start()
        base = f"http://127.0.0.1:{procs.port}"
        print(
            f"# gunicorn config.wsgi -w {args.workers} on {base}; manage.py jobs_worker "
            f"(JOBS_QUEUE=database); logs in {workdir}"
        )
        warm_up(procs, base)
        browsers = {role: Browser(base, log, role) for role in users}
        for role, b in browsers.items():
            b.login(*campaign.users[role])
        print(HEADER)
        ops = args.ops
        need_copy = not args.in_place and any(o in ON_COPY for o in ops)
        org = browsers["organizer"]
        if "archive" in ops or need_copy:
            archived = f"{campaign.slug}-copy"
            op_archive(bench, org, users["organizer"], campaign.slug, archived, workdir)
        if "reliability" in ops:
            op_reliability(bench, org, users["organizer"], copy, args.trials)
        if "judgments" in ops:
            op_judgments(bench, org, users["organizer"], campaign.slug, judged)
        if "upload" in ops:
            data = run_file(campaign.collection_id)
            op_upload(bench, browsers["participant"], users["participant"], copy, data)
        if "pool" in ops:
            op_pool(bench, org, users["organizer"], copy)
        if "mode" in ops:
            op_mode(bench, org, users["organizer"], copy)
        if "layers" in ops:
            op_layers(
                bench,
                org,
                users["organizer"],
                copy,
                [users["assessor"].pk, users["organizer"].pk],
            )
        if "pages" in ops:
            only = {p.strip() for p in args.pages.split(",") if p.strip()}
            op_pages(bench, browsers, campaign, args.cold, args.repeats, only)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: stopping the server and the worker", file=sys.stderr)
    finally:
        procs.stop()
        if not args.keep_copy:
            Collection.objects.filter(slug__in=[f"{campaign.slug}-copy", judged]).delete()
    print()
    for line in summary(bench, log):
        print(line)
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "campaign": campaign.slug,
                    "size": list(campaign.size),
                    "seed": args.seed,
                    "commit": commit,
                    "load_start": load,
                    "operations": [asdict(r) for r in bench.rows],
                    "pages": [asdict(p) for p in bench.pages],
                    "slow_requests": [asdict(r) for r in log if r.seconds > SLOW_REQUEST],
                },
                indent=2,
            )
        )
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
