"""Server time of the compare page, and of the paired tests behind it.

    .venv/bin/python bench/compare_bench.py             # demo + 5,000 questions
    .venv/bin/python bench/compare_bench.py --quick     # demo only, fewer repeats

Builds a throw-away SQLite database under $TMPDIR (migrate, ``load_demo``, and a
collection of 5,000 judged questions with two runs, seeded), then requests the compare
page of two runs in-process through Django's test client, logged in as the organizer:
"cold" is the first request (scores not cached yet), "warm" the median wall time of the
next requests (scores cached, so what is left is the statistics and the page), "warm cpu"
their median CPU time (this process only: steadier on a shared machine).  It also times
``evaluation.analysis.stats.paired`` alone on the 5,000 per-question differences (Q-measure).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_django(db_path: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "0")
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
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)


def big_collection(n: int, owner):
    """``n`` questions, 1-3 synsets each, two runs of 5 answers (seeded)."""
    import numpy as np
    from django.utils import timezone

    from annotate.models import AnswerString, AnswerSynset, Collection, Question
    from annotate.spellings import string_keys_sync
    from evaluation.models import Run, RunAnswer
    from tests.factories import add_member, make_collection

    Collection.objects.filter(slug="bench").delete()
    c = make_collection(slug="bench", name="compare bench")
    add_member(collection=c, user=owner, role="organizer")
    levels = {lv.code: lv for lv in c.levels.all()}
    rng = np.random.default_rng(7)
    qs = Question.objects.bulk_create(
        Question(collection=c, qid=f"Q{i:05d}", text=f"q {i}") for i in range(n)
    )
    nsyn = rng.integers(1, 4, size=n)
    syns = AnswerSynset.objects.bulk_create(
        AnswerSynset(question=q, ordinal=k + 1)
        for q, m in zip(qs, nsyn, strict=True)
        for k in range(m)
    )
    now = timezone.now()
    codes = list(levels)
    strings, it = [], iter(syns)
    for i, (q, m) in enumerate(zip(qs, nsyn, strict=True)):
        for k in range(m):
            s = next(it)
            strings.append(
                AnswerString(
                    question=q,
                    text=f"a{i}-{k}",
                    key=f"a{i}-{k}",
                    synset=s,
                    level=levels[codes[int(rng.integers(0, len(codes)))]],
                    judged_at=now,
                )
            )
    AnswerString.objects.bulk_create(strings, batch_size=5000)
    string_keys_sync(strings=strings, mode=c.matching_mode)
    runs = []
    for name in ("base", "better"):
        run = Run.objects.create(collection=c, owner=owner, name=name)
        p = 0.45 if name == "base" else 0.55
        answers = []
        for i, q in enumerate(qs):
            for r in range(5):
                t = f"a{i}-{int(rng.integers(0, 3))}" if rng.random() < p else f"w{i}-{r}"
                answers.append(RunAnswer(run=run, question=q, rank=r + 1, text=t, key=t))
        RunAnswer.objects.bulk_create(answers, batch_size=5000)
        runs.append(run)
    return c, runs


def time_page(client, url: str, repeats: int) -> tuple[float, float, float]:
    """Wall seconds of the first request (no score cached or stored), and the median wall and CPU
    seconds of the next ``repeats`` (CPU time: this process only, so less disturbed by
    other work on a shared machine)."""
    from django.core.cache import caches

    from evaluation.models import RunScores

    caches["scores"].clear()
    RunScores.objects.all().delete()  # scores are kept in the database too
    t = time.perf_counter()
    resp = client.get(url)
    cold = time.perf_counter() - t
    assert resp.status_code == 200, resp.status_code
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        resp = client.get(url)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        assert resp.status_code == 200
    return cold, statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--questions", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="compare-bench-") as tmp:
        setup_django(Path(tmp) / "bench.sqlite3")
        from django.contrib.auth import get_user_model
        from django.test import Client

        from evaluation.management.commands.load_demo import load_demo
        from evaluation.models import Run

        demo = load_demo()
        organizer = get_user_model().objects.get(username="organizer")
        client = Client()
        client.force_login(organizer)
        a, b = (Run.objects.get(collection=demo, name=n).pk for n in ("noAF", "AF"))
        repeats = 3 if args.quick else 10
        print(f"{'request':34} {'cold s':>8} {'warm s':>8} {'warm cpu s':>10}")
        url = f"/collections/demo/compare/?a={a}&b={b}"
        cold, warm, cpu = time_page(client, url, repeats)
        print(f"{'compare, demo (13 questions)':34} {cold:8.3f} {warm:8.3f} {cpu:10.3f}")
        if args.quick:
            return
        c, (ra, rb) = big_collection(args.questions, organizer)
        url = f"/collections/{c.slug}/compare/?a={ra.pk}&b={rb.pk}"
        cold, warm, cpu = time_page(client, url, 3)
        print(f"{f'compare, {args.questions:,} questions':34} {cold:8.3f} {warm:8.3f} {cpu:10.3f}")

        from evaluation import services
        from evaluation.analysis import score_config
        from evaluation.analysis.stats import paired

        config = score_config.ScoreConfig(metrics=("q_measure",))
        scores = services.score_runs(c, [ra, rb], config)
        pa = scores.per_question[ra.name]["q_measure"]
        pb = scores.per_question[rb.name]["q_measure"]
        wall, cpu = [], []
        for _ in range(3):
            t, c = time.perf_counter(), time.process_time()
            result = paired("q_measure", pa, pb)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(
            f"{'paired tests alone, ' + f'{args.questions:,} q':34} {'':>8} "
            f"{min(wall):8.3f} {min(cpu):10.3f}  randomization p="
            f"{result.randomization_p:.3g}"
        )


if __name__ == "__main__":
    main()
