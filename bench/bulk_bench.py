"""Wall and CPU time of the bulk writes (issue 24 item 5) through their service functions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_bench \\
        .venv/bin/python bench/bulk_bench.py                       # M and the 5,610 case
    .venv/bin/python bench/bulk_bench.py --case m --questions 200 --runs 10   # smoke (SQLite)

Two cases, generated with a seed as files in the formats the app imports
(docs/formats.md):

- ``m``: 2,000 questions x 100 runs x 10 answers (L' = 10).  A judgments CSV judges the
  first candidates of each question (two synsets, some spellings folded, a few judged
  incorrect); each run is a TSV of 20,000 lines (question_id, rank, answer, score) drawn
  from a per-question pool of 50 candidate answers, each written in one of a few
  spellings (case, a trailing period), so runs share most of their answers.
- ``nq``: 5,610 questions with the judged answers of 5 systems (NQ/TriviaQA-like): the
  judgments CSV names each question's distinct answers of the 5 systems, judged; each of
  the 5 runs answers every question with 1-5 answers.

Each operation runs through the service the page calls: the questions and judgments
imports through ``pending_import_create`` then ``pending_import_confirm`` (the import
page's confirm; only the confirm is timed), each run upload through ``run_import`` and
then ``score_runs`` of that run (the run page's scores: "stored and scored"), pooling one
run (``run_pool``), pooling every run (``runs_pool``), and the matching-mode change
(``collection_matching_mode_change``) to exact and back.  For each it prints the wall time,
this process's CPU time, and the database server's CPU time when it is a local PostgreSQL
(the backend process's utime + stime from /proc), with the number of statements.

``--reuse`` times only the pooling and the mode changes, on the collections a previous run
left (its pooling undone first). ``--profile OP`` (a prefix of the operation names
printed) writes a cProfile of those operations to ``$TMPDIR/bulk_bench_profiles/`` and
prints their 25 slowest statements. The database is the configured one (``DATABASE_URL``;
a throw-away SQLite file under $TMPDIR when unset): the bench migrates it and replaces its
own collections (slugs ``bulk-m``, ``bulk-nq``), nothing else.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NL = b"\n"
SYLLABLES = (
    "ka wa ba ta ya su na ri mi shi ma yu ki o to ro se ne pe lo ar bel cor dan "
    "el fin gor han is jor kel lum mor nor par quin ras sol tor ur vel wyn xan zor"
).split()


# -- generated inputs -----------------------------------------------------------------------
def _name(rng: np.random.Generator) -> str:
    words = []
    for _ in range(int(rng.integers(1, 4))):
        n = int(rng.integers(2, 4))
        words.append("".join(SYLLABLES[int(i)] for i in rng.integers(0, len(SYLLABLES), n)))
    return " ".join(w.capitalize() for w in words)


def _spellings(base: str) -> list[str]:
    """The ways a run writes one answer: all share the normalized key, not the exact one."""
    return [base, base.lower(), base + ".", base.upper()]


def candidates(rng: np.random.Generator, nq: int, per_question: int) -> list[list[str]]:
    out = []
    for _ in range(nq):
        seen: dict[str, None] = {}
        while len(seen) < per_question:
            seen.setdefault(_name(rng), None)
        out.append(list(seen))
    return out


def questions_csv(nq: int) -> bytes:
    lines = ["question_id,question"] + [f"Q{i:05d},Question number {i}?" for i in range(nq)]
    return ("\n".join(lines) + "\n").encode()


def judgments_csv(
    rng: np.random.Generator, cands: list[list[str]], judged: int, folds: float
) -> bytes:
    """Each question's first ``judged`` candidates: the first two in synset ``a`` (S, A),
    the third in ``b`` (B), the rest judged incorrect; with probability ``folds`` a row
    names a second spelling of the answer (folded into its string)."""
    lines = ["question_id,synset_id,answer,level"]
    for i, cs in enumerate(cands):
        for j, text in enumerate(cs[:judged]):
            syn, level = ("a", "S") if j == 0 else ("a", "A") if j == 1 else ("b", "B")
            if j >= 3:
                syn, level = "", ""
            lines.append(f"Q{i:05d},{syn},{text},{level}")
            if rng.random() < folds:
                lines.append(f"Q{i:05d},{syn},{text.lower()},{level}")
    return ("\n".join(lines) + "\n").encode()


def run_tsv(rng: np.random.Generator, cands: list[list[str]], depth: int, skill: float) -> bytes:
    """One run: per question ``depth`` distinct candidates, drawn without replacement with
    weights falling with the candidate's number (more so for a better run), each in a
    random spelling (mostly the first)."""
    nq, nc = len(cands), len(cands[0])
    weights = 1.0 / np.arange(1, nc + 1) ** (0.6 + skill)
    # Efraimidis-Spirakis: the depth largest u ** (1 / w) are a weighted sample
    u = rng.random((nq, nc))
    picks = np.argsort(-(np.log(u) / weights), axis=1)[:, :depth]
    spelling = rng.choice(4, size=(nq, depth), p=[0.7, 0.15, 0.1, 0.05])
    lines = []
    for i in range(nq):
        qid = f"Q{i:05d}"
        cs = cands[i]
        for r in range(depth):
            text = _spellings(cs[picks[i, r]])[spelling[i, r]]
            lines.append(f"{qid}\t{r + 1}\t{text}\t{1.0 - r / depth:.3f}")
    return ("\n".join(lines) + "\n").encode()


# -- measuring --------------------------------------------------------------------------------
class Statements:
    """An execute wrapper that counts the statements and keeps their times."""

    def __init__(self):
        self.times: dict[str, list[float]] = defaultdict(list)

    def __call__(self, execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.times[" ".join(str(sql).split())[:150]].append(time.perf_counter() - t)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.times.values())

    def slowest(self, n: int = 25) -> list[tuple[float, int, str]]:
        rows = [(sum(v), len(v), sql) for sql, v in self.times.items()]
        return sorted(rows, reverse=True)[:n]


def backend_cpu() -> float | None:
    """CPU seconds of the PostgreSQL backend serving this connection (a local server)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Bench:
    def __init__(self, profile: str | None, skip: list[str]):
        self.profile = profile
        self.skip = skip
        self.rows: list[tuple[str, float, float, float | None, int]] = []

    def time(self, name: str, fn, *, quiet: bool = False):
        from django.db import connection

        if any(name.startswith(s) for s in self.skip):
            print(f"{name:<44} skipped (--skip)")
            return None
        stmts = Statements()
        profiler = cProfile.Profile() if self.profile and name.startswith(self.profile) else None
        db0 = backend_cpu()
        c0, w0 = time.process_time(), time.perf_counter()
        with connection.execute_wrapper(stmts):
            if profiler:
                profiler.enable()
            result = fn()
            if profiler:
                profiler.disable()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        db1 = backend_cpu()
        db = db1 - db0 if db0 is not None and db1 is not None else None
        self.rows.append((name, wall, cpu, db, stmts.count))
        if not quiet:
            self.show(self.rows[-1])
        if profiler:
            out = Path(tempfile.gettempdir()) / "bulk_bench_profiles"
            out.mkdir(exist_ok=True)
            path = out / f"{name.replace(' ', '_').replace('/', '_')}.prof"
            profiler.dump_stats(path)
            print(f"    profile: {path}")
            for total, n, sql in stmts.slowest():
                print(f"    {total:8.3f} s {n:6d}x  {sql}")
        return result

    @staticmethod
    def show(row) -> None:
        name, wall, cpu, db, n = row
        dbs = f"{db:7.2f}" if db is not None else "      -"
        print(f"{name:<44} wall {wall:8.3f} s  cpu {cpu:7.3f} s  db cpu {dbs} s  {n:7d} stmts")
        sys.stdout.flush()

    def summary(self, prefix: str, label: str) -> None:
        rows = [r for r in self.rows if r[0].startswith(prefix)]
        if not rows:
            return
        walls, cpus = [r[1] for r in rows], [r[2] for r in rows]
        dbs = [r[3] for r in rows if r[3] is not None]
        print(
            f"{label:<44} wall median {statistics.median(walls):.3f} max {max(walls):.3f} s"
            f"  cpu median {statistics.median(cpus):.3f} max {max(cpus):.3f} s"
            + (f"  db cpu median {statistics.median(dbs):.3f} s" if dbs else "")
            + f"  ({len(rows)} runs)"
        )


# -- the cases --------------------------------------------------------------------------------
def setup_django() -> None:
    if not os.environ.get("DATABASE_URL"):
        path = Path(tempfile.mkdtemp(prefix="bulk-bench-")) / "bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret")
    # the bench times operations longer than a web request may take
    os.environ.setdefault("DJANGO_DB_STATEMENT_TIMEOUT_MS", "0")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)


def fresh_collection(slug: str, owner, max_output_size: int):
    from annotate.models import Collection
    from tests.factories import add_member, make_collection

    Collection.objects.filter(slug=slug).delete()
    c = make_collection(slug=slug, name=slug, max_output_size=max_output_size)
    add_member(collection=c, user=owner, role="organizer")
    return c


def confirm(bench: Bench, name: str, c, owner, kind: str, data: bytes, filename: str):
    from annotate.imports import pending_import_confirm, pending_import_create

    token = pending_import_create(
        collection=c, user=owner, kind=kind, filename=filename, data=data
    ).token
    _, plan = bench.time(
        name,
        lambda: pending_import_confirm(token=token, collection=c, user=owner, mark_done=True),
    )
    return plan


def upload(bench: Bench, name: str, c, owner, data: bytes, quiet: bool = False):
    from evaluation.analysis.score_config import ScoreConfig
    from evaluation.services import run_import, score_runs

    def go():
        run = run_import(
            collection=c, owner=owner, name=name, data=data, filename=f"{name}.tsv", fmt=None
        )
        score_runs(c, [run], ScoreConfig())
        return run

    return bench.time(f"run upload + score {name}", go, quiet=quiet)


def pool_and_modes(bench: Bench, c, owner, label: str, runs: list) -> None:
    from annotate.models import AnswerString, SpellingKey
    from evaluation import services

    bench.time(f"{label} pool one run", lambda: services.run_pool(run=runs[0], by=owner))
    if hasattr(services, "runs_pool"):
        bench.time(f"{label} pool all runs", lambda: services.runs_pool(collection=c, by=owner))
    else:  # before runs_pool: one run after another, as the run pages do
        bench.time(
            f"{label} pool all runs",
            lambda: [services.run_pool(run=r, by=owner) for r in runs],
        )
    strings = AnswerString.objects.filter(question__collection=c).count()
    keys = SpellingKey.objects.filter(question__collection=c).count()
    print(f"    {strings:,} strings, {keys:,} spelling keys after pooling")
    for mode in ("exact", "normalized"):
        bench.time(
            f"{label} matching mode -> {mode}",
            lambda mode=mode: services.collection_matching_mode_change(
                collection=c, mode=mode, by=owner
            ),
        )


def reused(slug: str, owner):
    """``--reuse``: the collection the last run built, its pooling undone (the pooled strings
    and their events deleted) and its mode normalized again, to time pooling and the mode
    change without building it anew; None when there is none."""
    from annotate.models import AnswerString, Collection, JudgmentEvent
    from evaluation.services import collection_matching_mode_change

    c = Collection.objects.filter(slug=slug).first()
    if c is None or not c.runs.exists():
        return None
    collection_matching_mode_change(collection=c, mode="normalized", by=owner)
    AnswerString.objects.filter(question__collection=c, source="pool").delete()
    JudgmentEvent.objects.filter(collection=c, action__in=["pool_run", "question_reopen"]).delete()
    print(f"reusing {slug}: {c.runs.count()} runs, pooling undone")
    return c


def case_m(bench: Bench, owner, args) -> None:
    from evaluation.models import Run

    if args.reuse and (c := reused("bulk-m", owner)):
        runs = list(Run.objects.filter(collection=c).order_by("name"))
        return pool_and_modes(bench, c, owner, "M", runs)
    rng = np.random.default_rng(args.seed)
    nq, nruns, depth = args.questions, args.runs, args.answers
    t = time.perf_counter()
    cands = candidates(rng, nq, 50)
    judgments = judgments_csv(rng, cands, judged=8, folds=0.3)
    runs = [run_tsv(rng, cands, depth, skill=k / max(nruns - 1, 1)) for k in range(nruns)]
    print(
        f"M: {nq:,} questions x {nruns} runs x {depth} answers; judgments CSV "
        f"{judgments.count(NL) - 1:,} rows; each run {runs[0].count(NL):,} lines "
        f"(generated in {time.perf_counter() - t:.1f} s)"
    )
    c = fresh_collection("bulk-m", owner, depth)
    confirm(bench, "M questions import confirm", c, owner, "questions", questions_csv(nq), "q.csv")
    confirm(bench, "M judgments import confirm", c, owner, "judgments", judgments, "j.csv")
    for k, data in enumerate(runs):
        upload(bench, f"m{k:03d}", c, owner, data, quiet=k not in (0, nruns - 1))
    bench.summary("run upload + score m", "M run upload + score (each)")
    pool_and_modes(bench, c, owner, "M", list(Run.objects.filter(collection=c).order_by("name")))


def case_nq(bench: Bench, owner, args) -> None:
    from evaluation.models import Run

    if args.reuse and (c := reused("bulk-nq", owner)):
        runs = list(Run.objects.filter(collection=c).order_by("name"))
        return pool_and_modes(bench, c, owner, "NQ", runs)
    rng = np.random.default_rng(args.seed + 1)
    nq, systems = args.nq, args.systems
    t = time.perf_counter()
    cands = candidates(rng, nq, 12)
    runs = [
        run_tsv(rng, cands, int(rng.integers(1, 6)), skill=k / max(systems - 1, 1))
        for k in range(systems)
    ]
    # every distinct answer of the systems is judged: the first three of a question correct
    answered: list[dict[str, None]] = [{} for _ in range(nq)]
    for data in runs:
        for line in data.decode().splitlines():
            qid, _, text, _ = line.split("\t")
            answered[int(qid[1:])].setdefault(text, None)
    lines = ["question_id,synset_id,answer,level"]
    for i in range(nq):
        order = {t.lower().rstrip("."): k for k, t in enumerate(cands[i])}
        for text in answered[i]:
            k = order[text.lower().rstrip(".")]
            syn, level = ("a", "S") if k == 0 else ("a", "A") if k == 1 else ("b", "B")
            if k >= 3:
                syn, level = "", ""
            lines.append(f"Q{i:05d},{syn},{text},{level}")
    judgments = ("\n".join(lines) + "\n").encode()
    print(
        f"NQ: {nq:,} questions, {systems} systems; judgments CSV {len(lines) - 1:,} rows; "
        f"runs {', '.join(f'{d.count(NL):,}' for d in runs)} lines "
        f"(generated in {time.perf_counter() - t:.1f} s)"
    )
    c = fresh_collection("bulk-nq", owner, 5)
    confirm(bench, "NQ questions import confirm", c, owner, "questions", questions_csv(nq), "q.csv")
    confirm(bench, "NQ judgments import confirm", c, owner, "judgments", judgments, "j.csv")
    for k, data in enumerate(runs):
        upload(bench, f"nq{k}", c, owner, data)
    pool_and_modes(bench, c, owner, "NQ", list(Run.objects.filter(collection=c).order_by("name")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=("m", "nq", "both"), default="both")
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--answers", type=int, default=10)
    ap.add_argument("--nq", type=int, default=5610)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--profile", metavar="OP", help="cProfile the operations named OP...")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="pool and change modes on the collections the last run built (pooling undone)",
    )
    ap.add_argument(
        "--skip", metavar="OP", action="append", default=[], help="skip the operations OP..."
    )
    args = ap.parse_args()
    setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection

    owner, _ = get_user_model().objects.get_or_create(username="bulk-bench")
    print(
        f"database: {connection.vendor} {connection.settings_dict['NAME']}; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    bench = Bench(args.profile, args.skip)
    if args.case in ("m", "both"):
        case_m(bench, owner, args)
    if args.case in ("nq", "both"):
        case_nq(bench, owner, args)
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
