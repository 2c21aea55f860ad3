"""Wall time, CPU time and peak RSS of ``manage.py export_collection`` and
``import_collection`` on a campaign of size S, M or L (DESIGN.md section 8: S = 200
questions x 30 runs x 5 answers, M = 2,000 x 100 x 10, L = 5,000 x 200 x 10), on
PostgreSQL (issue 24 item 5: export + import < 30 s at M, memory bounded).

    .venv/bin/python bench/archive_bench.py --size M          # builds M once, then measures
    .venv/bin/python bench/archive_bench.py --size S --rebuild

The campaign (seeded) lives in its own database (``--database``, default
``qasynset_archive_bench`` on 127.0.0.1:5432, created and migrated when missing) as the
collection ``bench-<size>``, built once and kept: each question has a pool of 30 answer
strings, 1-3 synsets of judged strings among them and some judged incorrect, the rest
pooled and unjudged; each run answers every question with distinct strings of its pool
(better runs rank correct ones higher); one audit event per question (a judging
snapshot).  Each command runs as its own process under ``/usr/bin/time -v`` with
production settings; the imported copy is deleted afterwards.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
SIZES = {"S": (200, 30, 5), "M": (2000, 100, 10), "L": (5000, 200, 10)}
POOL = 30  # answer strings per question


def _env(database: str) -> dict:
    return dict(
        os.environ,
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{database}",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="bench-archive-not-secret",
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_ALLOWED_HOSTS="testserver",
    )


def _ensure_database(database: str) -> None:
    exists = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{database}'",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not exists:
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-c", f'CREATE DATABASE "{database}"'],
            check=True,
            capture_output=True,
        )


def build(size: str, rebuild: bool) -> None:
    """The campaign ``bench-<size>`` (kept between runs unless ``rebuild``)."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotate.models import (
        AnswerString,
        AnswerSynset,
        Collection,
        JudgmentEvent,
        Level,
        Membership,
        Question,
    )
    from annotate.spellings import string_keys_sync
    from evaluation.models import Run

    nq, nruns, depth = SIZES[size]
    slug = f"bench-{size.lower()}"
    existing = Collection.objects.filter(slug=slug).first()
    if existing and not rebuild:
        print(f"campaign {slug} already built")
        return
    User = get_user_model()
    if existing:
        Collection.objects.filter(slug__startswith=slug).delete()
    t0 = time.perf_counter()
    rng = np.random.default_rng(24)
    users = {}
    for name in ["bench-org", "bench-a1", "bench-a2", *(f"bench-p{i}" for i in range(10))]:
        users[name] = User.objects.get_or_create(username=name)[0]
    with transaction.atomic():
        c = Collection.objects.create(slug=slug, name=f"Archive bench {size}")
        levels = [
            Level.objects.create(collection=c, code=code, label=code, gain=g, order=i)
            for i, (code, g) in enumerate([("S", 3.0), ("A", 2.0), ("B", 1.0)])
        ]
        Membership.objects.bulk_create(
            Membership(collection=c, user=u, role=role)
            for name, u in users.items()
            for role in [
                "organizer"
                if name == "bench-org"
                else "assessor"
                if "-a" in name
                else "participant"
            ]
        )
        qs = Question.objects.bulk_create(
            Question(collection=c, qid=f"Q{i:05d}", text=f"Question number {i}?", status="done")
            for i in range(nq)
        )
        nsyn = rng.integers(1, 4, size=nq)
        syns = AnswerSynset.objects.bulk_create(
            AnswerSynset(question=q, ordinal=k + 1)
            for q, m in zip(qs, nsyn, strict=True)
            for k in range(m)
        )
        syn_of = {}
        for s in syns:
            syn_of.setdefault(s.question_id, []).append(s)
        now = timezone.now()
        correct = {}  # question index -> the pool indexes judged correct
        strings = []
        for i, q in enumerate(qs):
            m = int(nsyn[i])
            n_correct = int(rng.integers(m, 3 * m + 1))
            correct[i] = set(range(n_correct))
            for k in range(POOL):
                text = f"answer {k} to question {i}"
                if k < n_correct:
                    s = AnswerString(
                        question=q,
                        text=text,
                        key=text,
                        synset=syn_of[q.pk][k % m],
                        level=levels[k % 3],
                        judged_at=now,
                        judged_by=users["bench-a1"],
                    )
                elif k < n_correct + 5:
                    s = AnswerString(
                        question=q, text=text, key=text, judged_at=now, judged_by=users["bench-a1"]
                    )
                else:
                    s = AnswerString(question=q, text=text, key=text, source="pool")
                strings.append(s)
        strings = AnswerString.objects.bulk_create(strings, batch_size=5000)
        string_keys_sync(strings=strings, mode=c.matching_mode)
        JudgmentEvent.objects.bulk_create(
            (
                JudgmentEvent(
                    collection=c,
                    question=q,
                    user=users["bench-a1"],
                    action="judge",
                    before={"strings": {str(s.pk): None for s in strings[i * POOL : i * POOL + 3]}},
                    after={
                        "strings": {
                            str(s.pk): {
                                "text": s.text,
                                "key": s.key,
                                "variants": [],
                                "source": s.source,
                                "synset": s.synset_id,
                                "level": s.level_id,
                                "judged_by": users["bench-a1"].pk,
                                "judged_at": now.isoformat(),
                            }
                            for s in strings[i * POOL : i * POOL + 3]
                        },
                        "synsets": [[syn.pk, "", ""] for syn in syn_of[q.pk]],
                    },
                )
                for i, q in enumerate(qs)
            ),
            batch_size=2000,
        )
        participants = [u for n, u in users.items() if n.startswith("bench-p")]
        runs = Run.objects.bulk_create(
            Run(
                collection=c,
                owner=participants[r % len(participants)],
                name=f"run-{r:03d}",
                source_name=f"run-{r:03d}.tsv",
                format="qa",
            )
            for r in range(nruns)
        )
        # the answers by COPY: built a run at a time
        with connection.cursor() as cur:
            for r, run in enumerate(runs):
                p = 0.2 + 0.6 * r / max(nruns - 1, 1)
                rows = []
                for i, q in enumerate(qs):
                    picks = rng.permutation(POOL)[:depth]
                    good = [k for k in picks if k in correct[i]]
                    bad = [k for k in picks if k not in correct[i]]
                    order = good + bad if rng.random() < p else list(picks)
                    for rank, k in enumerate(order, start=1):
                        text = f"answer {k} to question {i}"
                        rows.append((run.pk, q.pk, rank, text, text, float(depth - rank)))
                with cur.cursor.copy(
                    "COPY evaluation_runanswer (run_id, question_id, rank, text, key, score) "
                    "FROM STDIN"
                ) as copy:
                    for row in rows:
                        copy.write_row(row)
    print(
        f"built {slug}: {nq} questions x {nruns} runs x {depth} answers, "
        f"{len(strings)} strings, in {time.perf_counter() - t0:.0f} s"
    )


def measure(command: list[str], env: dict) -> dict:
    """Wall and CPU seconds, peak RSS (MB), exit status and last output line of
    ``manage.py <command>``."""
    start = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", PYTHON, "manage.py", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start

    def field(name):
        m = re.search(rf"{name}: ([0-9.]+)", proc.stderr)
        return float(m.group(1)) if m else float("nan")

    out = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.strip() and not line.startswith("\t")
    ]
    return {
        "wall": wall,
        "cpu": field(r"User time \(seconds\)") + field(r"System time \(seconds\)"),
        "rss": field(r"Maximum resident set size \(kbytes\)") / 1024,
        "status": proc.returncode,
        "last": out[-1][:200] if out else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="M")
    parser.add_argument("--database", default="qasynset_archive_bench")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    env = _env(args.database)
    _ensure_database(args.database)
    # building M's 2 million answers takes statements longer than the 20 s timeout (the
    # measured commands keep it)
    os.environ.update(env, DJANGO_DB_STATEMENT_TIMEOUT_MS="0")
    sys.path.insert(0, str(ROOT))
    build(args.size, args.rebuild)
    slug = f"bench-{args.size.lower()}"
    print(f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        path = Path(tmp) / f"{slug}.zip"
        for k in range(args.repeat):
            e = measure(["export_collection", slug, str(path)], env)
            size = path.stat().st_size / 1048576 if path.exists() else float("nan")
            print(
                f"export  wall {e['wall']:6.1f} s  cpu {e['cpu']:6.1f} s  peak RSS "
                f"{e['rss']:7.1f} MB  exit {e['status']}  archive {size:.1f} MB"
            )
            print(f"        {e['last']}")
            copy = f"{slug}-copy-{k}"
            i = measure(["import_collection", str(path), "--slug", copy], env)
            print(
                f"import  wall {i['wall']:6.1f} s  cpu {i['cpu']:6.1f} s  peak RSS "
                f"{i['rss']:7.1f} MB  exit {i['status']}"
            )
            print(f"        {i['last']}")
            print(f"export + import wall {e['wall'] + i['wall']:.1f} s")
            subprocess.run(
                [
                    PYTHON,
                    "-c",
                    "import django; django.setup(); "
                    "from annotate.models import Collection; "
                    f"Collection.objects.filter(slug={copy!r}).delete()",
                ],
                cwd=ROOT,
                env=env,
                check=True,
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
