"""The reliability report as a background job (issue 24): at a campaign's size (100 runs,
4,950 pairs, B = 1,000) it takes minutes, which no web request may hold.  ``compute_report``
computes the report of one configuration and keeps it as the job's file (an ``.npz``:
``reliability_report.reliability_dump``), named by ``reliability_report.reliability_key``
(collection, judgment version, runs, configuration); the page shows the last one computed
for its key (``finished_report``), follows a job computing it (``active_report``), or offers
to compute it.  A report of the same key is never computed twice: a finished one is
reused until a judgment or a run changes the key."""

from __future__ import annotations

import dataclasses
from urllib.parse import urlencode

from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy

from annotate.models import Collection, Role
from annotate.permissions import require_role
from evaluation.models import Run
from evaluation.reliability_report import (
    Reliability,
    ReliabilityConfig,
    compute_reliability,
    reliability_dump,
    reliability_key,
    reliability_load,
)
from jobs.models import ACTIVE, Job, JobOutput, JobStatus
from jobs.runner import JobContext, JobFailed

KIND = "reliability"
NPZ = "application/octet-stream"
PHASES = {
    "runs read": gettext_lazy("Reading the runs"),
    "bootstrap samples": gettext_lazy("Resampling: the figures of each metric"),
    "gain profiles": gettext_lazy("Ranking under each gain profile"),
}


def config_query(config: ReliabilityConfig) -> str:
    """The page's query string for ``config`` (its form's fields)."""
    fields = {k: v for k, v in dataclasses.asdict(config).items() if v is not None}
    return urlencode(fields)


def compute_report(ctx: JobContext) -> dict:
    """Compute the report of ``params["config"]`` over the runs ``params["runs"]`` and keep
    it as the job's file; the result names its key."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    if not ctx.params.get("cli"):
        if ctx.job.user is None:
            raise JobFailed(gettext("The user who asked for this report no longer exists."))
        try:
            require_role(ctx.job.user, collection, Role.ORGANIZER)
        except PermissionDenied as e:
            raise JobFailed(gettext("Only an organizer of the collection may compute it.")) from e
    config = ReliabilityConfig(**ctx.params["config"])
    runs = list(
        Run.objects.active()
        .filter(collection=collection, pk__in=ctx.params["runs"])
        .order_by("name")
    )
    # the key as the data stands when the job starts: a judgment made meanwhile gives the
    # page another key, and the page computes that one
    key = reliability_key(collection=collection, runs=runs, config=config)
    unit_seen: dict[str, str | None] = {"unit": None}

    def progress(done: int, total: int | None = None, unit: str | None = None) -> None:
        if unit != unit_seen["unit"]:
            unit_seen["unit"] = unit
            ctx.progress.phase(
                str(PHASES.get(unit or "", unit or "")), total=total, unit=unit or ""
            )
        ctx.progress(done, total, unit)

    page = compute_reliability(collection=collection, runs=runs, config=config, progress=progress)
    output = ctx.save_output(
        f"{collection.slug}-reliability-{config.metric}-{config.gains}.npz".replace(":", "-"),
        reliability_dump(page),
        NPZ,
    )
    url = reverse("evaluation:reliability", args=[collection.slug]) + "?" + config_query(config)
    return {
        "message": gettext(page.problem)
        if page.problem
        else gettext("Reliability of %(runs)s runs over %(questions)s questions (B = %(trials)s).")
        % {"runs": len(page.runs), "questions": page.questions, "trials": config.trials},
        "url": url,
        "link": gettext("Open the report"),
        "key": key,
        "output": output.pk,
    }


def active_report(collection: Collection, key: str) -> Job | None:
    """The job computing the report ``key`` now (queued or running), if any."""
    return (
        Job.objects.filter(kind=KIND, collection=collection, status__in=ACTIVE, params__key=key)
        .select_related("user")
        .defer("input")
        .order_by("created_at", "id")
        .first()
    )


def finished_report(
    collection: Collection, key: str, *, report: bool = False
) -> tuple[Job, Reliability] | None:
    """The last report computed for ``key`` and its job (None: none yet); with
    ``report``, with the figures of every metric (the CSV tables)."""
    job = (
        Job.objects.filter(kind=KIND, collection=collection, status=JobStatus.SUCCEEDED)
        .filter(result__key=key)
        .defer("input")
        .order_by("-finished_at", "-id")
        .first()
    )
    if job is None:
        return None
    cache = caches["scores"]
    name = f"reliability-job:{job.pk}:{job.finished_at.isoformat()}:{int(report)}"
    page = cache.get(name)
    if page is None:
        output = JobOutput.objects.filter(job=job, pk=job.result.get("output")).first()
        if output is None:  # its file deleted (the admin deletes old jobs)
            return None
        page = reliability_load(bytes(output.data), report=report)
        cache.set(name, page, 600)
    return job, page
