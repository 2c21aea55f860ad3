"""p50/p95 server time of the score pages, the dashboard and the judging page on a campaign
of a reference size (issue 24 item 5: every page p95 < 300 ms at size M).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/qa \\
        .venv/bin/python bench/pages_bench.py --size M --seed 1 --repeats 20

Builds the campaign with ``bench/campaign_data.py`` (or reuses it: same size and seed),
then requests each page in-process through Django's test client (production settings:
DEBUG off), logged in as each role that may see it: the runs list and its runs.csv, one
run's page, the comparison of two runs, the ranking page and its matrix CSV, the
collection's page and the organizer's dashboard, and the judging page of a question.

For each page and role it prints the first request after the scores were forgotten
(``cold``: nothing cached for this collection, as after a restart), then over
``--repeats`` requests the p50, p95 and largest wall time, the median CPU time of this
process and the median time the requests spent in the database, and the queries of one
request.  With ``--after-judgment`` each timed request follows one judgment of the
collection (a string judged incorrect is sent back to the pool and judged incorrect
again), so every score is out of date: what a page costs while assessors judge.

Wall times on a shared machine include the other work's; the CPU and database columns
say how much of it was this request's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_django() -> None:
    """Production settings (DEBUG off: no query log) on the environment's database."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
    import django

    django.setup()
    from django.conf import settings

    # no collectstatic here: plain static URLs instead of the manifest's hashed names
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


class QueryTimer:
    """Time and count the queries of a block (``connection.execute_wrapper``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - t
            self.count += 1


def forget_scores(collection_id: int) -> None:
    """Drop every cached score of the collection (as after a restart, or before the first
    view of new judgments)."""
    from django.core.cache import caches

    caches["scores"].clear()
    try:
        from evaluation.models import RunScores
    except ImportError:  # before scores were kept in the database
        return
    RunScores.objects.filter(run__collection_id=collection_id).delete()


def pages(campaign) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, URL, roles) of every page timed."""
    from django.urls import reverse

    from annotate.models import AnswerString
    from evaluation.models import Run

    slug = campaign.slug
    participant = campaign.users["participant"][0]
    own = (
        Run.objects.active()
        .filter(collection_id=campaign.collection_id, owner__username=participant)
        .order_by("name")
    )
    a, b = own[0].pk, own[1].pk
    question = (
        AnswerString.objects.filter(
            question__collection_id=campaign.collection_id, synset__isnull=False
        )
        .order_by("question_id")
        .values_list("question_id", flat=True)
        .first()
    )
    both = ("organizer", "participant")
    return [
        ("runs list", reverse("evaluation:run-list", args=[slug]), both),
        ("runs.csv", reverse("evaluation:run-list-csv", args=[slug]), both),
        ("run page", reverse("evaluation:run-detail", args=[slug, a]), both),
        ("compare", reverse("evaluation:compare", args=[slug]) + f"?a={a}&b={b}", both),
        ("ranking", reverse("evaluation:ranking", args=[slug]), both),
        ("ranking matrix.csv", reverse("evaluation:ranking-matrix-csv", args=[slug]), both),
        ("collection page", reverse("annotate:collection-detail", args=[slug]), both),
        ("dashboard", reverse("annotate:collection-dashboard", args=[slug]), ("organizer",)),
        ("judging page", reverse("annotate:question-judge", args=[question]), ("assessor",)),
    ]


def judge_once(collection_id: int, user) -> None:
    """One judgment that leaves the judgments as they were: a string judged incorrect goes
    back to the pool and is judged incorrect again (the collection's judgment version
    moves by two)."""
    from annotate import judging
    from annotate.models import AnswerString

    s = (
        AnswerString.objects.filter(
            question__collection_id=collection_id, synset__isnull=True, judged_at__isnull=False
        )
        .order_by("pk")
        .first()
    )
    judging.string_unjudge(question=s.question_id, string=s.pk, by=user)
    judging.string_judge(question=s.question_id, string=s.pk, by=user)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by linear interpolation, as numpy's default."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def time_request(client, url: str) -> tuple[float, float, QueryTimer, int]:
    """Wall and CPU seconds of one GET, its queries, and the response's size in bytes."""
    from django.db import connection

    timer = QueryTimer()
    t, c = time.perf_counter(), time.process_time()
    with connection.execute_wrapper(timer):
        resp = client.get(url)
        body = b"".join(resp) if resp.streaming else resp.content
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert resp.status_code == 200, (url, resp.status_code)
    return wall, cpu, timer, len(body)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S", help="S, M, L or QxRxA (e.g. 50x4x5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--only", default="", help="comma list of page names to time")
    ap.add_argument(
        "--after-judgment",
        action="store_true",
        help="time each request right after a judgment (every score out of date)",
    )
    args = ap.parse_args(argv)
    if not os.environ.get("DATABASE_URL"):
        ap.error("set DATABASE_URL (PostgreSQL: postgres://postgres@127.0.0.1:5432/NAME)")
    setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from bench.campaign_data import Size, build

    size: str | Size = args.size
    if "x" in args.size.lower():
        size = Size(*(int(x) for x in args.size.lower().split("x")))
    t = time.perf_counter()
    campaign = build(size, args.seed)
    how = "built" if campaign.built else "reused"
    print(
        f"# {campaign.slug} ({how} in {time.perf_counter() - t:.1f} s): "
        f"{len(campaign.question_ids):,} questions x {len(campaign.run_ids)} runs, "
        f"{connection.vendor}; load average {os.getloadavg()[0]:.2f} at start"
    )
    User = get_user_model()
    users = {
        role: User.objects.get(username=campaign.users[role][0])
        for role in ("organizer", "assessor", "participant")
    }
    clients = {}
    for role, user in users.items():
        clients[role] = Client()
        clients[role].force_login(user)
    only = {p.strip() for p in args.only.split(",") if p.strip()}
    mode = "each right after a judgment" if args.after_judgment else "one after another"
    print(
        f"# cold: the first request with nothing cached (its wall, CPU and database seconds); "
        f"then {args.repeats} requests, {mode}"
    )
    print(
        f"{'page':20} {'role':12} {'cold s':>7} {'cpu':>6} {'db':>6} | {'p50 s':>7} "
        f"{'p95 s':>7} {'max s':>7} {'cpu s':>7} {'db s':>7} {'queries':>7} {'KB':>6}"
    )
    slow = []
    for name, url, roles in pages(campaign):
        if only and name not in only:
            continue
        for role in roles:
            client = clients[role]
            forget_scores(campaign.collection_id)
            cold, cold_cpu, cold_db, _ = time_request(client, url)
            walls, cpus, dbs, queries, size_kb = [], [], [], 0, 0
            for _ in range(args.repeats):
                if args.after_judgment:
                    judge_once(campaign.collection_id, users["organizer"])
                wall, cpu, timer, nbytes = time_request(client, url)
                walls.append(wall)
                cpus.append(cpu)
                dbs.append(timer.seconds)
                queries, size_kb = timer.count, nbytes / 1024
            p95 = percentile(walls, 0.95)
            if p95 >= 0.3:
                slow.append((name, role, p95))
            print(
                f"{name:20} {role:12} {cold:7.3f} {cold_cpu:6.2f} {cold_db.seconds:6.2f} | "
                f"{percentile(walls, 0.5):7.3f} {p95:7.3f} "
                f"{max(walls):7.3f} {statistics.median(cpus):7.3f} "
                f"{statistics.median(dbs):7.3f} {queries:7d} {size_kb:6.0f}",
                flush=True,
            )
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    if slow:
        print("# p95 >= 0.300 s: " + ", ".join(f"{n} ({r}) {p:.3f}" for n, r, p in slow))
    else:
        print("# every page p95 < 0.300 s")


if __name__ == "__main__":
    main()
