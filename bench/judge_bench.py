"""p50/p95 of the judging POST round trip (request -> rendered workspace partial) on
SQLite, one user, with production settings (DJANGO_DEBUG=0).

    .venv/bin/python bench/judge_bench.py [--n 100]

Uses a throw-away SQLite file; each timed request judges one candidate into a synset
(op=add, htmx) and renders the refreshed workspace, as a keypress in the browser does.
Targets: p95 < 50 ms for 20 synsets / 200 strings, < 150 ms for 100 / 1,000.  Each line
gives the wall clock and the CPU time (``time.process_time``) of the same requests: on a
shared machine the wall clock is mostly queueing for a core, and even the CPU time swells
when the other core is busy, so compare runs made in the same conditions.

Figures, 2026-11-23 (the judging POST was over its p95 target): the code before (64c7d47)
and after the changes below, run alternately, three rounds each, ``TMPDIR=<own dir>
.venv/bin/python bench/judge_bench.py``, on this 2-core machine shared with three other
sessions' test runs (load average 2.0-4.0 during these rounds), in ms:

    200 strings    wall p50   before  64.3 101.9 121.7   after  53.9  89.6  98.9
                   wall p95   before  73.6 150.8 165.3   after  65.4 115.5 135.0
                   CPU p50    before  63.1  51.8  58.1   after  51.8  43.0  46.4
    1,000 strings  wall p50   before  95.7 244.1 257.2   after  98.3 183.0 131.7
                   wall p95   before 166.4 375.2 378.6   after 179.8 228.1 190.0
                   CPU p50    before  93.1 119.6 123.8   after  77.3  89.5  67.1

Two more rounds a little later (load 1.8-2.6), before / after: 200 strings p50 60.7 74.3 /
56.5 45.2, p95 77.6 145.7 / 98.4 71.8, CPU p50 59.9 62.5 / 40.4 42.0; 1,000 strings p50
140.7 113.2 / 81.6 91.5, p95 168.9 192.6 / 124.4 157.2, CPU p50 138.8 90.0 / 60.4 81.3.

Less noisy, from the same requests run in one process (60 POSTs a size, alternately, load
2-4): the least CPU of a POST went from 37-38 to 30-33 ms (200 strings) and from 80-85 to
48-56 ms (1,000 strings); the Python function calls of a POST (cProfile, deterministic) from
106 k to 61 k and from 328 k to 124 k.  What went: the suggestion forms of the judged
strings recomputed at every request (annotate/suggest.py: ``_form`` is cached per process),
the escaping of every judged string's row (annotate/templatetags/workspace.py: rows and a
synset's joined rows are cached per process, keyed by every value they show; a candidate's
text and own inputs too), Django's ``date`` filter on the 30 history lines (``event_time``),
a JSON decode of "[]" per string, and a second read of the question (and its collection)
after each edit.  What is left at 200 strings is mostly Django's own: the ORM building 27
queries (half of them the edit itself), sessions and authentication, and the synset cards'
template (~0.1 ms a card, a quarter of it the ``{% csrf_token %}``).

Earlier figures, same day, load average 7-11: the code before the workspace markup moved
into templates (5196e3b^) and after it (412a421), run alternately, three rounds each, p95
in ms:

    200 strings    before 688.8  636.1  393.5    after 453.9  565.2  463.5
    1,000 strings  before 772.0  729.5  823.4    after 1201.3 1585.1 733.5

CPU of one workspace render (htmx GET, 1,000 strings, min of 10): 42 ms before, 66 ms
after.  The first run before the change, on a quieter machine (load 1.5), gave p95 37.4 /
155.1 ms.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB = Path(tempfile.gettempdir()) / "judge_bench.sqlite3"
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# production settings (DEBUG off: no query log, no template debug info), over plain http
os.environ["DJANGO_DEBUG"] = "0"
os.environ.setdefault("DJANGO_SECRET_KEY", "judge-bench-" + "k" * 50)
os.environ["DJANGO_SECURE_SSL_REDIRECT"] = "0"
os.environ["DJANGO_SECURE_COOKIES"] = "0"


def _p95(xs: list[float]) -> float:
    return xs[int(0.95 * (len(xs) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100, help="timed requests per size")
    args = parser.parse_args()
    DB.unlink(missing_ok=True)
    # Django set up as the server runs it (config/wsgi.py, with its GC tuning)
    importlib.import_module("config.wsgi")
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    # no collectstatic here: plain static storage instead of the manifest
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # the shared cache (judging presence)
    from annotate.models import AnswerString, Role
    from tests.factories import add_member, make_big_question, make_collection, make_user

    user = make_user(username="bench")
    client = Client()
    client.force_login(user)
    for synsets, strings in ((20, 200), (100, 1000)):
        c = make_collection()
        add_member(collection=c, user=user, role=Role.ORGANIZER)
        q = make_big_question(
            collection=c,
            qid=f"B{synsets}",
            n_synsets=synsets,
            n_strings=strings,
            n_unjudged=min(args.n + 5, strings // 2),
        )
        cands = list(
            AnswerString.objects.filter(question=q, judged_at__isnull=True).values_list(
                "pk", flat=True
            )
        )
        url = f"/questions/{q.pk}/act/"
        times, cpu = [], []
        for i, pk in enumerate(cands[: args.n + 5]):
            t, c = time.perf_counter(), time.process_time()
            r = client.post(
                url,
                {"op": "add", "string": pk, "ordinal": (i % synsets) + 1, "expect": "u"},
                headers={"HX-Request": "true"},
            )
            r.content  # noqa: B018 - rendered
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            assert r.status_code == 200 and b"notice" not in r.content, r.content[:500]
        # the first requests warm the template cache
        times, cpu = sorted(times[5:]), sorted(cpu[5:])
        print(
            f"{synsets:4d} synsets / {strings:5d} strings: p50 {statistics.median(times):6.1f} ms  "
            f"p95 {_p95(times):6.1f} ms  (n={len(times)});  CPU p50 "
            f"{statistics.median(cpu):5.1f} ms  p95 {_p95(cpu):5.1f} ms"
        )
    DB.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
