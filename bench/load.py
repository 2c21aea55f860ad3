"""Load test: gunicorn + PostgreSQL, 50 assessors judging and 5 participants uploading runs.

    .venv/bin/python bench/load.py [--duration 120] [--assessors 50] [--participants 5]
                                   [--workers 4] [--questions 2000]

Creates a fresh PostgreSQL database (dropped first), migrates it, seeds a collection of
--questions questions (synsets, strings, pooled candidates, levels S/A/B, assessors assigned
round-robin, participants, an organizer, two runs), starts gunicorn on 127.0.0.1 with
DJANGO_DEBUG=0, runs locust headless (bench/locustfile.py) for --duration seconds, prints
throughput, p50/p95/p99 per request type and the errors, then checks that the database
holds exactly the acknowledged judgments (no lost, no duplicated writes), and tears
everything down (gunicorn stopped, database dropped).  Needs ``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG = "postgres://postgres@127.0.0.1:5432"
PASSWORD = "load-test-pw-5318"
TARGET_P95_MS = 250


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=120, help="seconds of load (120)")
    ap.add_argument("--assessors", type=int, default=50)
    ap.add_argument("--participants", type=int, default=5)
    ap.add_argument(
        "--workers",
        type=int,
        default=2 * (os.cpu_count() or 2) + 1,
        help="gunicorn workers (2 x cores + 1)",
    )
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--database", default="qasynset_load")
    ap.add_argument("--think", default="1,3", help="assessor think time range, seconds (1,3)")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = ap.parse_args()
    if args.participants == 1:
        ap.error("--participants must be 0 or at least 2 (compare needs two runs)")

    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="qasynset-load-"))
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
    gunicorn = None
    try:
        t0 = time.perf_counter()
        load_before = os.getloadavg()
        recreate_database(args.database)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        call_command("createcachetable", verbosity=0)
        call_command("collectstatic", verbosity=0, interactive=False)
        config = seed(args)
        print(
            f"setup: database {args.database} migrated and seeded with {args.questions} "
            f"questions, {config['n_strings']} strings in {time.perf_counter() - t0:.1f} s"
        )
        from django.db import connections

        connections.close_all()

        think = [float(x) for x in args.think.split(",")]
        config.update(
            {
                "assessors": args.assessors,
                "participants": args.participants,
                "think_min": think[0],
                "think_max": think[1],
                "participant_think_min": 10,
                "participant_think_max": 30,
                "password": PASSWORD,
                "results": str(work / "results.json"),
            }
        )
        (work / "config.json").write_text(json.dumps(config))

        gunicorn = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "-w",
                str(args.workers),
                "-b",
                f"127.0.0.1:{port}",
                "--timeout",
                "60",
                "--graceful-timeout",
                "10",
                "--worker-tmp-dir",
                "/dev/shm",
                "--preload",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=open(work / "gunicorn.log", "w"),
            stderr=subprocess.STDOUT,
        )
        wait_for_port(port, gunicorn)
        print(
            f"gunicorn: {args.workers} workers on 127.0.0.1:{port}; locust: "
            f"{args.assessors} assessors + {args.participants} participants for "
            f"{args.duration} s"
        )

        users = args.assessors + args.participants
        cmd = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(ROOT / "bench" / "locustfile.py"),
            "--headless",
            "--only-summary",
            "-u",
            str(users),
            "-r",
            "10",
            "--reset-stats",
            "-t",
            f"{args.duration}s",
            "--stop-timeout",
            "10",
            "--host",
            f"http://127.0.0.1:{port}",
            "--loglevel",
            "WARNING",
        ]
        locust_env = {**env, "LOAD_CONFIG": str(work / "config.json")}
        with open(work / "locust.log", "w") as log:
            try:
                subprocess.run(
                    cmd,
                    cwd=ROOT,
                    env=locust_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=args.duration + 120,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                print("locust did not stop in time; killed", file=sys.stderr)
        stop(gunicorn)
        gunicorn = None
        results_path = work / "results.json"
        if not results_path.exists():
            print((work / "locust.log").read_text()[-3000:], file=sys.stderr)
            raise SystemExit("locust wrote no results")
        results = json.loads(results_path.read_text())
        report(results, args, load_before)
        problems = verify(results, config)
        return 0 if problems == 0 else 1
    finally:
        if gunicorn is not None:
            stop(gunicorn)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # Django may not be set up yet
            pass
        if not args.keep:
            drop_database(args.database)
        log = work / "gunicorn.log"
        if log.exists() and log.stat().st_size:
            print(f"gunicorn log (last lines, {log}):\n" + log.read_text()[-2000:])


# -- database and processes -------------------------------------------------------------------
def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def recreate_database(name: str) -> None:
    drop_database(name)
    _admin(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("gunicorn exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start listening")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- seeding ----------------------------------------------------------------------------------
def seed(args) -> dict:
    """One collection of ``args.questions`` questions, each with 0-3 synsets of 1-3 judged
    strings, 0-2 incorrect strings and 6-10 pooled candidates; users; two runs."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.utils import timezone

    from annotate.models import (
        AnswerString,
        AnswerSynset,
        Collection,
        Level,
        Membership,
        Question,
    )
    from annotate.normalize import normalize_answer
    from annotate.spellings import string_keys_sync
    from evaluation.models import Run, RunAnswer

    rng = random.Random(6)
    User = get_user_model()
    pw = make_password(PASSWORD)  # one hash for all: logins still pay the full PBKDF2 cost
    assessors = [f"assessor{i:02d}" for i in range(1, args.assessors + 1)]
    participants = [f"participant{i}" for i in range(1, args.participants + 1)]
    User.objects.bulk_create(
        User(username=u, password=pw) for u in [*assessors, *participants, "organizer"]
    )
    users = {u.username: u for u in User.objects.all()}
    c = Collection.objects.create(
        name="Load test",
        slug="load",
        max_output_size=5,
        open_for_submissions=True,
        leaderboard_published=True,
    )
    levels = Level.objects.bulk_create(
        Level(collection=c, code=code, label=code, gain=g, order=i)
        for i, (code, g) in enumerate((("S", 3.0), ("A", 2.0), ("B", 1.0)))
    )
    Membership.objects.bulk_create(
        [Membership(collection=c, user=users["organizer"], role="organizer")]
        + [Membership(collection=c, user=users[u], role="assessor") for u in assessors]
        + [Membership(collection=c, user=users[u], role="participant") for u in participants]
    )
    questions = Question.objects.bulk_create(
        Question(collection=c, qid=f"Q{i:05d}", text=f"Load question {i}?")
        for i in range(1, args.questions + 1)
    )
    through = Question.assessors.through
    through.objects.bulk_create(
        through(question_id=q.pk, user_id=users[assessors[i % len(assessors)]].pk)
        for i, q in enumerate(questions)
    )
    plan = [(q, [rng.randint(1, 3) for _ in range(rng.randint(0, 3))]) for q in questions]
    synsets = AnswerSynset.objects.bulk_create(
        AnswerSynset(question=q, ordinal=o) for q, sizes in plan for o in range(1, len(sizes) + 1)
    )
    now = timezone.now()
    strings, texts, it = [], {}, iter(synsets)
    for q, sizes in plan:
        words = [f"answer {q.pk} {j}" for j in range(sum(sizes) + 12)]
        rng.shuffle(words)
        texts[q.qid] = words[:]
        for size in sizes:
            syn = next(it)
            for _ in range(size):
                strings.append(
                    AnswerString(
                        question=q,
                        text=words.pop(),
                        synset=syn,
                        level=rng.choice(levels),
                        judged_at=now,
                        source="flat",
                    )
                )
        for _ in range(rng.randint(0, 2)):
            strings.append(AnswerString(question=q, text=words.pop(), judged_at=now, source="flat"))
        for _ in range(rng.randint(6, 10)):
            strings.append(AnswerString(question=q, text=words.pop(), source="pool"))
    for s in strings:
        s.key = normalize_answer(s.text, c.matching_mode)
    AnswerString.objects.bulk_create(strings, batch_size=5000)
    string_keys_sync(strings=strings, mode=c.matching_mode)
    run_ids = []
    for n, owner in enumerate(participants[:2] or ["organizer"], start=1):
        run = Run.objects.create(
            collection=c,
            owner=users[owner],
            name=f"seed-run-{n}",
            source_name=f"seed-run-{n}.tsv",
            format="qa",
        )
        answers = []
        for q in questions:
            for r, t in enumerate(rng.sample(texts[q.qid], 5), start=1):
                answers.append(
                    RunAnswer(
                        run=run,
                        question=q,
                        rank=r,
                        text=t,
                        key=normalize_answer(t, c.matching_mode),
                    )
                )
        RunAnswer.objects.bulk_create(answers, batch_size=5000)
        run_ids.append(run.pk)
    return {
        "slug": c.slug,
        "levels": {lv.code: lv.pk for lv in levels},
        "assessor_names": assessors,
        "participant_names": participants,
        "run_ids": run_ids,
        "run_texts": texts,
        "max_output": c.max_output_size,
        "run_answers": 5 * len(questions),
        "n_strings": len(strings),
        "collection_id": c.pk,
    }


# -- report and verification ------------------------------------------------------------------
def report(results: dict, args, load_before) -> None:
    stats = results["stats"]
    print(
        f"\n== load: {args.assessors} assessors + {args.participants} participants, "
        f"{args.duration} s, {args.workers} gunicorn workers, {os.cpu_count()} cores; "
        "load average before %.1f, after %.1f (other work on this machine included)"
        % (load_before[0], os.getloadavg()[0])
    )
    print(
        "statistics from the moment every user had been started (locust --reset-stats; "
        "logins still under way then are counted); warm-up rows: the whole run"
    )
    print(
        f"{'request':44} {'count':>7} {'fail':>5} {'req/s':>7} {'p50':>6} {'p95':>6} "
        f"{'p99':>6} {'max':>7}  (ms)"
    )
    for name, e in stats.items():
        if name == "total":
            print("-" * 96)
        print(
            f"{name:44} {e['requests']:7d} {e['failures']:5d} {e['rps']:7.1f} "
            f"{e['p50']:6.0f} {e['p95']:6.0f} {e['p99']:6.0f} {e['max']:7.0f}"
        )
    total, judging = stats["total"], stats["judging actions (all act: writes)"]
    print(
        f"throughput: {total['rps']:.1f} requests/s ({total['requests']} requests), "
        f"judging writes {judging['rps']:.1f}/s"
    )
    print(f"errors: {total['failures']}")
    for e in results["errors"]:
        print(f"  {e['occurrences']} x {e['method']} {e['name']}: {e['error'][:150]}")
    for a in results["anomalies"][:20]:
        print(f"  anomaly: {a[:200]}")
    verdict = "met" if judging["p95"] < TARGET_P95_MS else "NOT met"
    print(f"judging actions p95 {judging['p95']:.0f} ms (target < {TARGET_P95_MS} ms: {verdict})")


def verify(results: dict, config: dict) -> int:
    """Compare every question an assessor worked on with its acknowledged state: the same
    strings in the same synsets with the same levels, one event and one version per
    acknowledged write; acknowledged run uploads are complete.  Returns the problems."""
    from django.db.models import Count

    from annotate.models import AnswerString, JudgmentEvent, Question, string_token
    from evaluation.models import Run

    models = {int(k): m for k, m in results["models"].items()}
    certain = {pk: m for pk, m in models.items() if not m["uncertain"]}
    db_strings: dict[int, dict[str, str]] = {pk: {} for pk in models}
    for s in AnswerString.objects.filter(question_id__in=list(models)):
        db_strings[s.question_id][str(s.pk)] = string_token(s)
    versions = dict(Question.objects.filter(pk__in=list(models)).values_list("pk", "version"))
    events = dict(
        JudgmentEvent.objects.filter(question_id__in=list(models))
        .values("question_id")
        .annotate(n=Count("id"))
        .values_list("question_id", "n")
    )
    lost = dup = wrong = 0
    acked = 0
    for pk, m in certain.items():
        acked += m["writes"]
        expected = m["strings"]
        got = db_strings[pk]
        differ = [k for k in set(expected) | set(got) if expected.get(k) != got.get(k)]
        if differ:
            wrong += 1
            if wrong <= 10:
                print(
                    f"  q{pk}: DB differs from the acknowledged state for strings {differ[:5]}"
                    f" (expected {[expected.get(k) for k in differ[:5]]}, "
                    f"DB {[got.get(k) for k in differ[:5]]})"
                )
        n_events, version = events.get(pk, 0), versions[pk]
        if n_events < m["writes"] or version < m["writes"]:
            lost += m["writes"] - min(n_events, version)
        elif n_events > m["writes"] or version > m["writes"]:
            dup += max(n_events, version) - m["writes"]
    uploads = results["uploads"]
    ok_uploads = [u for u in uploads if u["acknowledged"]]
    runs = dict(
        Run.objects.filter(name__in=[u["name"] for u in uploads])
        .annotate(n=Count("answers"))
        .values_list("name", "n")
    )
    bad_runs = sum(runs.get(u["name"]) != u["answers"] for u in ok_uploads)
    partial = sum(u["name"] in runs for u in uploads if not u["acknowledged"])
    print(
        f"\n== verification against the database: {len(models)} questions worked on "
        f"({len(models) - len(certain)} with an unacknowledged write, not checked), "
        f"{acked} acknowledged judging writes"
    )
    print(
        f"lost judgments: {lost}; duplicated writes: {dup}; questions whose strings differ "
        f"from the acknowledged state: {wrong}"
    )
    print(
        f"run uploads: {len(ok_uploads)} acknowledged, {bad_runs} missing or incomplete; "
        f"{partial} unacknowledged uploads left a run behind"
    )
    return lost + dup + wrong + bad_runs + partial + results["stats"]["total"]["failures"]


if __name__ == "__main__":
    sys.exit(main())
