"""Job functions for the jobs tests (importable by a worker process: tests is a package)."""

from __future__ import annotations

import time

from django.db import transaction

from annotate.models import Collection
from jobs.runner import JobContext, JobFailed


def rename(ctx: JobContext) -> dict:
    """Renames the collection in steps inside one transaction, reporting each step; with
    ``sleep`` it is slow enough to be killed or cancelled mid-way."""
    steps = int(ctx.params.get("steps", 3))
    ctx.progress.phase("Renaming", total=steps, unit="steps")
    with transaction.atomic():
        collection = Collection.objects.select_for_update().get(pk=ctx.job.collection_id)
        for i in range(steps):
            Collection.objects.filter(pk=collection.pk).update(name=f"{ctx.params['name']} {i}")
            time.sleep(float(ctx.params.get("sleep", 0)))
            ctx.progress(i + 1)
        Collection.objects.filter(pk=collection.pk).update(name=ctx.params["name"])
    return {"message": f"Renamed to {ctx.params['name']}.", "url": "/"}


def refuse(ctx: JobContext) -> dict:
    raise JobFailed(
        "The file was not imported.",
        [
            {"file": ctx.job.input_name, "line": 3, "message": "expected 4 columns, found 2"},
            {"file": ctx.job.input_name, "line": 9, "message": "unknown level 'Z'"},
        ],
    )


def crash(ctx: JobContext) -> dict:
    raise RuntimeError("boom")


def echo_input(ctx: JobContext) -> dict:
    return {"message": f"{len(ctx.input)} bytes", "size": len(ctx.input)}


def make_file(ctx: JobContext) -> dict:
    output = ctx.save_output("report.csv", b"a,b\n=1,2\n", "text/csv")
    return {"message": "Report ready.", "output": output.pk}


def read_then_rename(ctx: JobContext) -> dict:
    """Reports a reading phase outside any transaction (its progress reaches the row on
    SQLite too), then renames in one transaction as ``rename`` does."""
    steps = int(ctx.params.get("read_steps", 3))
    ctx.progress.phase("Reading", total=steps, unit="lines")
    for i in range(steps):
        time.sleep(float(ctx.params.get("read_sleep", 0)))
        ctx.progress(i + 1)
    return rename(ctx)


def odd_result(ctx: JobContext) -> dict:
    """Returns values JSON cannot hold as they are (a numpy integer, a Decimal, a date)."""
    import datetime
    from decimal import Decimal

    import numpy as np

    return {
        "message": "Odd.",
        "count": np.int64(3),
        "mean": Decimal("0.5"),
        "on": datetime.date(2026, 1, 2),
    }


def refuse_with_numpy_lines(ctx: JobContext) -> dict:
    import numpy as np

    raise JobFailed("Bad file.", [{"file": "a.tsv", "line": np.int64(7), "message": "bad"}])


def stopped(ctx: JobContext) -> dict:
    """Writes, then is stopped as a worker is by a second SIGTERM (SystemExit)."""
    with transaction.atomic():
        Collection.objects.filter(pk=ctx.job.collection_id).update(name="half-way")
        raise SystemExit(1)


def timed_out(ctx: JobContext) -> dict:
    from rq.timeouts import JobTimeoutException

    raise JobTimeoutException("Task exceeded maximum timeout value (21600 seconds)")


def database_timeouts(ctx: JobContext) -> dict:
    """The PostgreSQL timeouts the job's connection runs with."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
        )
        statement, lock = cursor.fetchone()
    return {"message": "Read.", "statement_timeout": statement, "lock_timeout": lock}
