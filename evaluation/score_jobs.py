"""Scores computed by a worker (issue 24; DESIGN.md section 8).  A page that would score
more run answers than a request may (``services.REQUEST_SCORING_ANSWERS``: the first view
after a judgments import, a change of matching mode or levels, an archive import, a
configuration nobody asked for yet) leaves the work to one job per collection and
configuration, ``score_collection``, and shows its progress; the job stores every run's
scores (``evaluation.score_store``), and the page then reads them.  Viewers who arrive
meanwhile follow the same job: ``scores_start`` starts one only where none is waiting or
running.  The job is the app's, not a person's (``Job.listed`` False, no user): anybody
who may see the collection's scores sees its progress on the page that waits for it."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotate.models import Collection
from jobs.models import ACTIVE, Conflict, Job, JobLock
from jobs.runner import JobContext
from jobs.services import job_start

from . import services
from .analysis.score_config import ScoreConfig
from .models import Run
from .score_store import FULL_CHUNK_ANSWERS, config_digest

KIND = "scores"
SCORE_COLLECTION = "evaluation.score_jobs.score_collection"
LABEL = gettext_lazy("Scoring the runs of %(collection)s")
# ahead of uploads, imports and reports in the queue: a page is waiting for it
SCORES_PRIORITY = 50


def config_params(config: ScoreConfig) -> dict[str, Any]:
    """``config`` as a job's params keep it (with its digest, to find the job by)."""
    return {
        "metrics": list(config.metrics),
        "gains": config.gains,
        "beta": config.beta,
        "rbp_p": config.rbp_p,
        "digest": config_digest(config),
    }


def config_of(params: dict[str, Any]) -> ScoreConfig:
    return ScoreConfig(
        tuple(params["metrics"]), params["gains"], float(params["beta"]), float(params["rbp_p"])
    )


def score_collection(ctx: JobContext) -> dict[str, Any]:
    """The job: every run of the collection scored under ``params["config"]`` and stored,
    a group of runs at a time (its bar counts runs)."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    config = config_of(ctx.params["config"])
    runs = list(Run.objects.active().filter(collection=collection).order_by("pk"))
    questions = collection.questions.count()
    per = max(1, 2 * FULL_CHUNK_ANSWERS // max(1, questions * collection.max_output_size))
    ctx.progress.phase(_("Scoring the runs"), total=len(runs), unit="runs")
    ctx.progress(0)
    for i in range(0, len(runs), per):
        group = runs[i : i + per]
        services.score_runs(collection, group, config, in_request=False)
        ctx.progress(i + len(group))
    return {
        "message": _("Scores of %(runs)s run(s) computed for the current judgments.")
        % {"runs": len(runs)},
        "runs": len(runs),
    }


def scores_start(collection: Collection, config: ScoreConfig) -> Job:
    """The job scoring ``collection``'s runs under ``config``: the one waiting or running
    already, else a new one.  Raises ``jobs.services.JobRefused`` while a job that must run
    alone (a change of matching mode) holds the collection."""
    digest = config_digest(config)
    with transaction.atomic():
        lock, _created = JobLock.objects.get_or_create(key=f"scores:{collection.pk}:{digest}")
        JobLock.objects.select_for_update().get(pk=lock.pk)
        running = Job.objects.filter(
            kind=KIND, collection=collection, status__in=ACTIVE, params__config__digest=digest
        ).first()
        if running is not None:
            return running
        return job_start(
            kind=KIND,
            label=str(LABEL % {"collection": collection.name}),
            func=SCORE_COLLECTION,
            user=None,
            collection_id=collection.pk,
            conflict=Conflict.SHARED,
            params={"config": config_params(config)},
            listed=False,
            priority=SCORES_PRIORITY,
        )
