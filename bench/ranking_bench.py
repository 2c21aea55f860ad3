"""Server time of the runs and ranking pages with their 95% intervals and the all-pairs
matrix on 50 runs x 5,000 questions.

    .venv/bin/python bench/ranking_bench.py                  # 50 runs x 5,000 questions
    .venv/bin/python bench/ranking_bench.py --runs 10 --questions 500   # smoke

Builds a throw-away SQLite database under $TMPDIR (migrate, a collection of judged
questions with 1-3 synsets each and ``--runs`` runs of 5 answers a question whose
quality grows with the run number, seeded), then requests each page in-process through
Django's test client as the organizer: "cold" is the first request (scores not cached),
"warm" the median wall time of the next ones (scores cached: what is left is the
intervals, the tests and the page), "warm cpu" their median CPU time (this process only).
Pages: the runs page and the ranking page with their defaults (t intervals of the five
default metrics; paired t + Holm over all pairs), then with bootstrap intervals (B =
1,000) and with the randomised Tukey HSD (1,000 permutations), and the matrix CSV.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.compare_bench import setup_django, time_page  # noqa: E402


def big_collection(nq: int, nruns: int, owner):
    from django.utils import timezone

    from annotate.models import AnswerString, AnswerSynset, Question
    from annotate.spellings import string_keys_sync
    from evaluation.models import Run, RunAnswer
    from tests.factories import add_member, make_collection

    c = make_collection(slug="ranking-bench", name="ranking bench")
    add_member(collection=c, user=owner, role="organizer")
    levels = list(c.levels.all())
    rng = np.random.default_rng(16)
    qs = Question.objects.bulk_create(
        Question(collection=c, qid=f"Q{i:05d}", text=f"q {i}") for i in range(nq)
    )
    nsyn = rng.integers(1, 4, size=nq)
    syns = AnswerSynset.objects.bulk_create(
        AnswerSynset(question=q, ordinal=k + 1)
        for q, m in zip(qs, nsyn, strict=True)
        for k in range(m)
    )
    now = timezone.now()
    it = iter(syns)
    strings = AnswerString.objects.bulk_create(
        (
            AnswerString(
                question=q,
                text=f"a{i}-{k}",
                key=f"a{i}-{k}",
                synset=next(it),
                level=levels[int(rng.integers(0, len(levels)))],
                judged_at=now,
            )
            for i, (q, m) in enumerate(zip(qs, nsyn, strict=True))
            for k in range(m)
        ),
        batch_size=5000,
    )
    string_keys_sync(strings=strings, mode=c.matching_mode)
    for k in range(nruns):
        run = Run.objects.create(collection=c, owner=owner, name=f"run{k:02d}")
        p = 0.3 + 0.4 * k / max(nruns - 1, 1)
        hit = rng.random((nq, 5)) < p
        pick = rng.integers(0, 3, size=(nq, 5))
        RunAnswer.objects.bulk_create(
            (
                RunAnswer(run=run, question=q, rank=r + 1, text=t, key=t)
                for i, q in enumerate(qs)
                for r in range(5)
                for t in [f"a{i}-{pick[i, r]}" if hit[i, r] else f"w{i}-{r}"]
            ),
            batch_size=10000,
        )
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ranking-bench-") as tmp:
        setup_django(Path(tmp) / "bench.sqlite3")
        from django.test import Client

        from tests.factories import make_user

        organizer = make_user(username="bench-organizer")
        t = time.perf_counter()
        c = big_collection(args.questions, args.runs, organizer)
        print(
            f"built {args.runs} runs x {args.questions:,} questions in "
            f"{time.perf_counter() - t:.0f} s; load average {os.getloadavg()[0]:.2f}"
        )
        client = Client()
        client.force_login(organizer)
        base = f"/collections/{c.slug}"
        pages = [
            ("runs page (t)", f"{base}/runs/"),
            ("ranking page (t + Holm)", f"{base}/ranking/"),
            ("ranking page (bootstrap B=1000)", f"{base}/ranking/?interval=bootstrap"),
            ("ranking page (Tukey 1000)", f"{base}/ranking/?test=tukey"),
            ("matrix CSV (Holm)", f"{base}/ranking-matrix.csv"),
        ]
        print(f"{'request':34} {'cold s':>8} {'warm s':>8} {'warm cpu s':>10}")
        for label, url in pages:
            cold, warm, cpu = time_page(client, url, args.repeat)
            print(f"{label:34} {cold:8.3f} {warm:8.3f} {cpu:10.3f}")
        size = len(client.get(f"{base}/ranking/").content)
        print(f"ranking page size: {size / 1024:.0f} KiB")
        print(f"{'alone, on the cached scores':34} {'':>8} {'wall s':>8} {'cpu s':>10}")
        from evaluation import services
        from evaluation.analysis import score_config
        from evaluation.analysis.significance import TestConfig, pair_tests, score_intervals
        from evaluation.models import Run

        runs = list(Run.objects.filter(collection=c).order_by("name"))
        scores = services.score_runs(c, runs, score_config.ScoreConfig())
        names = list(scores.runs)
        parts = [
            ("t intervals, 5 metrics", lambda: score_intervals(scores, TestConfig())),
            (
                "bootstrap intervals, 5 metrics",
                lambda: score_intervals(scores, TestConfig(interval="bootstrap")),
            ),
            (
                "paired t + Holm, all pairs",
                lambda: pair_tests(scores, metric="q_measure", order=names, config=TestConfig()),
            ),
            (
                "Tukey HSD, 1,000 permutations",
                lambda: pair_tests(
                    scores, metric="q_measure", order=names, config=TestConfig(test="tukey")
                ),
            ),
            ("run answer stats + unjudged (SQL)", lambda: _counts(runs)),
        ]
        for label, fn in parts:
            wall, cpu = [], []
            for _ in range(args.repeat):
                t, p = time.perf_counter(), time.process_time()
                fn()
                wall.append(time.perf_counter() - t)
                cpu.append(time.process_time() - p)
            print(f"{label:34} {'':>8} {min(wall):8.3f} {min(cpu):10.3f}")


def _counts(runs):
    from evaluation import selectors

    return selectors.run_answer_stats(runs), selectors.unjudged_counts(runs)


if __name__ == "__main__":
    main()
