"""Server time, CPU time and peak Python memory (tracemalloc) of every CSV download of a
campaign (issue 24 item 2: a CSV that cannot stream in under 2 s becomes a job or streams).

    .venv/bin/python bench/csv_bench.py --slug bench-m     # on DATABASE_URL (PostgreSQL)

Requests each download in-process through Django's test client as the collection's first
organizer, twice (the second with the scores cached), and prints per download the cold and
warm wall and CPU seconds, the peak memory Python allocated during the warm request
(numpy's arrays included) and the size of the file.  Runs on the collection
``bench/archive_bench.py`` builds (``bench-m``: 2,000 questions x 100 runs x 10 answers).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slug", default="bench-m")
    parser.add_argument("--only", default="", help="comma list of download names")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-csv-not-secret")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
    import django

    django.setup()
    from django.test import Client

    from annotate.models import Collection, Membership
    from evaluation.models import Run

    c = Collection.objects.get(slug=args.slug)
    organizer = Membership.objects.filter(collection=c, role="organizer").first().user
    runs = list(Run.objects.filter(collection=c).order_by("name")[:2])
    base = f"/collections/{c.slug}"
    downloads = {
        "ranking.csv": f"{base}/ranking.csv",
        "ranking-matrix.csv": f"{base}/ranking-matrix.csv",
        "ranking-matrix.csv tukey": f"{base}/ranking-matrix.csv?test=tukey",
        "compare.csv": f"{base}/compare.csv?a={runs[0].pk}&b={runs[1].pk}",
        "scores.csv (one run)": f"{base}/runs/{runs[0].pk}/scores.csv",
        "layer-scores.csv": f"{base}/layer-scores.csv",
        "export judgments.csv": f"{base}/export/judgments.csv",
        "export questions.csv": f"{base}/export/questions.csv",
        "export events.csv": f"{base}/export/events.csv",
        "layers.csv": f"{base}/layers.csv",
        "runs.csv": f"{base}/runs.csv",
    }
    if args.only:
        downloads = {k: v for k, v in downloads.items() if k in args.only.split(",")}
    client = Client()
    client.force_login(organizer)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'download':26} {'status':>6} {'cold s':>7} {'cpu':>6} {'warm s':>7} {'cpu':>6} "
        f"{'peak MB':>8} {'KB':>8}"
    )
    for name, url in downloads.items():
        timings = []
        for _ in range(2):
            w, t = time.perf_counter(), time.process_time()
            response = client.get(url)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            timings.append((time.perf_counter() - w, time.process_time() - t))
        tracemalloc.start()
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        (cw, cc), (ww, wc) = timings
        print(
            f"{name:26} {response.status_code:6} {cw:7.2f} {cc:6.2f} {ww:7.2f} {wc:6.2f} "
            f"{peak / 1048576:8.1f} {len(body) / 1024:8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
