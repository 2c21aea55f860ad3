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
