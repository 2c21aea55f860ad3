"""Wall, CPU and database CPU time of a collection's matching-mode change (issue 24 item 5:
< 10 s at size M on PostgreSQL), through the service the job calls.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_bench \\
        .venv/bin/python bench/mode_change_bench.py --size M          # build M once, then time
    .venv/bin/python bench/mode_change_bench.py --size 50x4x5      # smoke (SQLite)

Builds (or reuses) the campaign of ``bench/campaign_data.py`` (size M: 2,000 questions x
100 runs x 10 answers, normalized matching), then changes its mode to each of ``--modes``
in turn (default: exact, then normalized again) with
``evaluation.services.collection_matching_mode_change``, and prints for each change its
wall time, this process's CPU time, the database server's CPU time (a local PostgreSQL:
the backend's utime + stime from /proc), the time of each of its two steps (the strings'
re-key, ``annotate.matching``; the run answers', ``run_answers_rekey``), the number of
statements and the slowest ones.  ``--explain`` prints ``EXPLAIN (ANALYZE, BUFFERS)`` of
every statement that writes the run answers (run once more for it, in a savepoint rolled
back).  ``--vacuum`` runs VACUUM of the run answers after each change, as autovacuum
would (the next change's updates are heap-only then; the bench prints how many were).
The database is the configured one (``DATABASE_URL``; a throw-away SQLite file
under $TMPDIR when unset).

``--judgments-csv`` also times the collection's judgments CSV export both ways (issue 24:
7.9 s at M): built from model instances (``select_related`` of the question, level and
assessor per judged string, as ``annotate.imports.export_judgments`` did) and from the
tuples of ``annotate.judgments_csv.judgment_rows``, and checks they are the same bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bulk_bench import Statements, backend_cpu  # noqa: E402
from bench.campaign_data import Size, build  # noqa: E402


class Explain:
    """An execute wrapper that prints EXPLAIN ANALYZE of the statements writing the run
    answers, run first in a savepoint that is rolled back."""

    def __call__(self, execute, sql, params, many, context):
        text = str(sql)
        if not many and text.lstrip().upper().startswith("UPDATE") and "runanswer" in text:
            cur = context["cursor"].cursor
            cur.execute("SAVEPOINT bench_explain")
            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + text, params)
            plan = "\n".join("      " + r[0] for r in cur.fetchall())
            cur.execute("ROLLBACK TO SAVEPOINT bench_explain")
            print(f"    EXPLAIN ANALYZE {' '.join(text.split())[:120]}\n{plan}")
        return execute(sql, params, many, context)


def timed(label: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, (label, time.perf_counter() - t0, time.process_time() - c0)


def hot() -> str:
    """On PostgreSQL: how many of the run answers' updates in this transaction were
    heap-only (no index entry written; RunAnswer's docstring).  A transaction running long
    in any database of the server (its xid older than the last change's) keeps the pages
    from being pruned of the versions the last change left, and the updates then move the
    rows to new pages."""
    from django.db import connection

    from evaluation.models import RunAnswer

    if connection.vendor != "postgresql":
        return ""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pg_stat_get_xact_tuples_hot_updated(%s::regclass)",
            [RunAnswer._meta.db_table],
        )
        return f", {cur.fetchone()[0]:,} heap-only"


def change(collection, mode: str, owner, *, explain: bool) -> None:
    """One mode change, its two steps timed apart (the service runs them in this order)."""
    from django.db import connection

    from annotate import matching
    from evaluation import services

    steps: list[tuple[str, float, float]] = []
    real_set, real_rekey = matching.collection_set_matching_mode, services.run_answers_rekey

    def set_mode(**kw):
        out, step = timed("strings", lambda: real_set(**kw))
        steps.append(step)
        return out

    def rekey(**kw):
        out, step = timed("run answers", lambda: real_rekey(**kw))
        steps.append((step[0] + f" ({out:,} changed{hot()})", *step[1:]))
        return out

    stmts = Statements()
    db0 = backend_cpu()
    t0, c0 = time.perf_counter(), time.process_time()
    matching.collection_set_matching_mode, services.run_answers_rekey = set_mode, rekey
    try:
        with connection.execute_wrapper(stmts):
            if explain and connection.vendor == "postgresql":
                with connection.execute_wrapper(Explain()):
                    services.collection_matching_mode_change(
                        collection=collection, mode=mode, by=owner
                    )
            else:
                services.collection_matching_mode_change(collection=collection, mode=mode, by=owner)
    finally:
        matching.collection_set_matching_mode, services.run_answers_rekey = real_set, real_rekey
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    db1 = backend_cpu()
    db = f"{db1 - db0:7.2f} s" if db0 is not None and db1 is not None else "      -"
    print(
        f"matching mode -> {mode:<10} wall {wall:7.2f} s  cpu {cpu:6.2f} s  db cpu {db}"
        f"  {stmts.count:5d} stmts" + ("  (with EXPLAIN runs)" if explain else "")
    )
    for label, w, c in steps:
        print(f"    {label:<30} wall {w:7.2f} s  cpu {c:6.2f} s")
    for total, n, sql in stmts.slowest(5):
        print(f"    {total:7.3f} s {n:4d}x  {sql[:110]}")
    sys.stdout.flush()


def judgments_csv(collection) -> None:
    """The judgments export built both ways, timed; the same text or an AssertionError."""
    from django.db.models import F

    from annotate.imports import _synset_ids
    from annotate.judgments_csv import HEADER, judgment_rows
    from annotate.models import AnswerString
    from evaluation.metrics.csvio import write_csv

    def by_instances() -> str:
        synset_ids = _synset_ids(collection)
        strings = (
            AnswerString.objects.filter(question__collection=collection, judged_at__isnull=False)
            .select_related("question", "level", "judged_by")
            .order_by("question_id", F("synset__ordinal").asc(nulls_last=True), "id")
        )
        rows = (
            [
                s.question.qid,
                synset_ids[s.synset_id] if s.synset_id else "",
                text,
                s.level.code if s.level_id else "",
                s.question.text,
                s.judged_by.get_username() if s.judged_by_id else "",
                s.judged_at.isoformat(timespec="seconds"),
            ]
            for s in strings.iterator(2000)
            for text in (s.text, *s.variants)
        )
        return write_csv(HEADER, rows)

    def by_rows() -> str:
        return write_csv(HEADER, judgment_rows(collection, _synset_ids(collection)))

    texts = []
    for label, fn in (("model instances", by_instances), ("values_list rows", by_rows)):
        text, (_, wall, cpu) = timed(label, fn)
        texts.append(text)
        print(
            f"judgments.csv by {label:<17} wall {wall:7.2f} s  cpu {cpu:6.2f} s  "
            f"{text.count(chr(10)):,} lines, {len(text.encode()):,} bytes"
        )
    assert texts[0] == texts[1], "the two exports differ"
    print("    same bytes")


def vacuum() -> None:
    """VACUUM of the run answers (PostgreSQL), timed: the room the versions a change left
    took made free for the next change's, as autovacuum does once a change is committed
    (a server without autovacuum, or a transaction running long elsewhere on it, leaves
    the next change to find no room on the pages: its updates then write index entries)."""
    from django.db import connection

    from evaluation.models import RunAnswer

    if connection.vendor != "postgresql":
        return
    t0 = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute(f"VACUUM {connection.ops.quote_name(RunAnswer._meta.db_table)}")
    print(f"    VACUUM of the run answers    wall {time.perf_counter() - t0:7.2f} s")


def setup_django() -> None:
    if not os.environ.get("DATABASE_URL"):
        path = Path(tempfile.mkdtemp(prefix="mode-bench-")) / "bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret")
    os.environ.setdefault("DJANGO_DB_STATEMENT_TIMEOUT_MS", "0")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="M", help="S, M, L or QxRxA (e.g. 50x4x5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default="exact,normalized", help="comma list, in order")
    ap.add_argument(
        "--explain", action="store_true", help="EXPLAIN ANALYZE the run answers' writes"
    )
    ap.add_argument(
        "--vacuum",
        action="store_true",
        help="VACUUM the run answers after each change (what autovacuum does a while later)",
    )
    ap.add_argument("--judgments-csv", action="store_true", help="time the judgments export too")
    ap.add_argument("--no-modes", action="store_true", help="no mode change (with --judgments-csv)")
    args = ap.parse_args(argv)
    size: str | Size = args.size
    if "x" in args.size.lower():
        size = Size(*(int(x) for x in args.size.lower().split("x")))
    setup_django()
    from django.contrib.auth import get_user_model

    from annotate.models import AnswerString, Collection
    from evaluation.models import RunAnswer

    t0 = time.perf_counter()
    campaign = build(size, args.seed)
    c = Collection.objects.get(pk=campaign.collection_id)
    owner = get_user_model().objects.get(username=campaign.users["organizer"][0])
    strings = AnswerString.objects.filter(question__collection=c).count()
    answers = RunAnswer.objects.filter(run__collection=c).count()
    print(
        f"{campaign.slug} ({'built' if campaign.built else 'reused'} in "
        f"{time.perf_counter() - t0:.1f} s): {strings:,} strings, {answers:,} run answers, "
        f"matching {c.matching_mode}"
    )
    if args.judgments_csv:
        judgments_csv(c)
    for mode in [] if args.no_modes else args.modes.split(","):
        change(c, mode.strip(), owner, explain=args.explain)
        if args.vacuum:
            vacuum()


if __name__ == "__main__":
    main()
