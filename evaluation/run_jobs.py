"""The run operations as background jobs (``jobs``, DESIGN.md section 8): a run's upload
and replacement (read the file, store its answers, score it), pooling one run and pooling
every run of a collection.  Each is one job function, whoever starts it: the runs pages,
the API and ``manage.py import_run`` call the ``*_start`` functions here, which record the
job and run it at once when it is small (``inline``) or queue it for a worker.

A job function reads the job's params and file, reports its progress (lines read, answers
stored, questions or runs pooled), writes through ``evaluation.services`` in one
transaction and returns its result; a bad file fails it with every problem and its line
(``JobFailed``), exactly the list the upload page showed inline.  Permission checks stay in
the services: the job acts as the user who started it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotate.models import Collection, Role
from annotate.permissions import require_role
from evaluation import services
from evaluation.metrics import InputError, Issue
from jobs.models import Conflict, Job
from jobs.progress import JobCancelled, Progress, Snapshot
from jobs.runner import JobContext, JobFailed
from jobs.services import job_start

from .forms import ScoreConfigForm
from .models import Run, RunAnswer

logger = logging.getLogger(__name__)

# a run file this small is read, stored and scored in the request (well under a second);
# a larger one waits for a worker
RUN_INLINE_BYTES = 200 * 1024
RUN_INLINE_LINES = 2000
# pooling this many run answers or fewer runs in the request
POOL_INLINE_ANSWERS = 2000

# the phases' labels, by the services' progress units (lazy: shown in the job's language)
UPLOAD_STEPS = {
    "lines": gettext_lazy("Reading the file"),
    "answers": gettext_lazy("Storing the answers"),
}
POOL_STEPS = {
    "questions": gettext_lazy("Sending answers to the assessors' pool"),
    "runs": gettext_lazy("Sending answers to the assessors' pool"),
}


class _Steps:
    """A service's ``progress(done, total, unit)`` as the job's phases: each new unit
    starts the phase ``labels[unit]`` (the file's lines, then the answers stored)."""

    def __init__(self, progress: Progress, labels: dict[str, Any], unit: str) -> None:
        """``unit``: the one of the phase the job has started already."""
        self.progress = progress
        self.labels = labels
        self.unit = unit

    def __call__(self, done: int, total: int | None = None, unit: str | None = None) -> None:
        if unit is not None and unit != self.unit:
            self.unit = unit
            label = self.labels.get(unit) or unit[:1].upper() + unit[1:]
            self.progress.phase(str(label), total=total, unit=unit)
        self.progress(done, total, unit)


def small_run_file(data: bytes) -> bool:
    """Whether a run file is small enough to be read and stored in the request."""
    return len(data) <= RUN_INLINE_BYTES and data.count(b"\n") <= RUN_INLINE_LINES


def issue_errors(issues: list[Issue]) -> list[dict[str, Any]]:
    return [{"file": i.file, "line": i.line, "message": i.message} for i in issues]


def _user(ctx: JobContext) -> AbstractBaseUser:
    if ctx.job.user is None:
        raise JobFailed(_("The account that started this job no longer exists; nothing was done."))
    return ctx.job.user


def _run_url(run: Run) -> str:
    return reverse("evaluation:run-detail", args=[run.collection.slug, run.pk])


def _scored(ctx: JobContext, collection: Collection, run: Run) -> dict[str, float | None]:
    """The run's means under the run page's default configuration (its last step: the
    scores are computed, and cached, before anyone opens the page).  The run is stored by
    now: a cancel or a scoring failure here leaves it stored and the job succeeded."""
    try:
        ctx.progress.phase(_("Scoring the run"), total=1, unit="run")
        config = ScoreConfigForm.read(None, collection).config
        scores = services.score_runs(collection, [run], config, in_request=False)
        means = scores.means().loc[run.name]
        ctx.progress(1)
    except JobCancelled:
        return {}
    except Exception:  # the run is stored; its page scores it again when opened
        logger.exception("scoring run %s after its upload failed", run.pk)
        return {}
    return {m: None if math.isnan(float(means[m])) else float(means[m]) for m in config.metrics}


def _run_result(run: Run, answers: int, message: str, means: dict[str, float | None]) -> dict:
    return {
        "message": message,
        "url": _run_url(run),
        "link": _("Open the run"),
        "run_id": run.pk,
        "run_name": run.name,
        "answers": answers,
        "means": means,
    }


# -- upload ---------------------------------------------------------------------------------
def run_upload_start(
    *,
    collection: Collection,
    user: AbstractBaseUser,
    name: str,
    data: bytes,
    filename: str,
    description: str = "",
    fmt: str | None = None,
    inline: bool | None = None,
    listener: Callable[[Snapshot], None] | None = None,
) -> Job:
    """Start the upload of a run (``run_upload``): at once for a small file (or ``inline``;
    ``listener`` then hears its progress), else queued.  Raises
    ``jobs.services.JobRefused`` when a conflicting job holds the collection."""
    return job_start(
        kind="run-upload",
        label=_("Upload of run %(name)s") % {"name": repr(name.strip())},
        func="evaluation.run_jobs.run_upload",
        user=user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        params={"name": name, "description": description, "format": fmt or ""},
        input=data,
        input_name=filename,
        inline=small_run_file(data) if inline is None else inline,
        listener=listener,
    )


def run_upload(ctx: JobContext) -> dict:
    """Read, check, store and score a run (``services.run_import``, all or nothing)."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    params = ctx.params
    ctx.progress.phase(str(UPLOAD_STEPS["lines"]), unit="lines")
    try:
        run = services.run_import(
            collection=collection,
            owner=_user(ctx),
            name=params["name"],
            data=ctx.input,
            filename=ctx.job.input_name,
            description=params.get("description", ""),
            fmt=params.get("format") or None,
            progress=_Steps(ctx.progress, UPLOAD_STEPS, "lines"),
        )
    except PermissionDenied as e:
        raise JobFailed(str(e)) from None
    except InputError as e:
        raise JobFailed(
            _("The run was not stored: %(count)s problem(s).") % {"count": len(e.issues)},
            issue_errors(e.issues),
        ) from None
    answers = run.answers.count()
    return _run_result(
        run,
        answers,
        _("Run %(name)s uploaded: %(answers)s answers.")
        % {"name": repr(run.name), "answers": answers},
        _scored(ctx, collection, run),
    )


# -- replace --------------------------------------------------------------------------------
def run_replace_start(
    *,
    run: Run,
    user: AbstractBaseUser,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    inline: bool | None = None,
) -> Job:
    """Start replacing ``run``'s file (``run_replace``), at once for a small file."""
    return job_start(
        kind="run-replace",
        label=_("Replacement of run %(name)s") % {"name": repr(run.name)},
        func="evaluation.run_jobs.run_replace",
        user=user,
        collection_id=run.collection_id,
        conflict=Conflict.SHARED,
        params={"run": run.pk, "format": fmt or ""},
        input=data,
        input_name=filename,
        inline=small_run_file(data) if inline is None else inline,
    )


def run_replace(ctx: JobContext) -> dict:
    """Replace a run's answers by a new file (``services.run_replace``, all or nothing: a
    bad file leaves the run as it was)."""
    run = Run.objects.select_related("collection").filter(pk=ctx.params["run"]).first()
    if run is None:
        raise JobFailed(_("The run is gone; nothing was changed."))
    ctx.progress.phase(str(UPLOAD_STEPS["lines"]), unit="lines")
    try:
        run = services.run_replace(
            run=run,
            data=ctx.input,
            filename=ctx.job.input_name,
            by=_user(ctx),
            fmt=ctx.params.get("format") or None,
            progress=_Steps(ctx.progress, UPLOAD_STEPS, "lines"),
        )
    except PermissionDenied as e:
        raise JobFailed(str(e)) from None
    except InputError as e:
        raise JobFailed(
            _("The run was not changed: %(count)s problem(s).") % {"count": len(e.issues)},
            issue_errors(e.issues),
        ) from None
    answers = run.answers.count()
    return _run_result(
        run,
        answers,
        _("Run %(name)s replaced: %(answers)s answers.")
        % {"name": repr(run.name), "answers": answers},
        _scored(ctx, run.collection, run),
    )


# -- pooling --------------------------------------------------------------------------------
def run_pool_start(*, run: Run, user: AbstractBaseUser, inline: bool | None = None) -> Job:
    """Start pooling ``run``'s unjudged answers (``run_pool``), at once for a small run."""
    if inline is None:
        inline = RunAnswer.objects.filter(run=run).count() <= POOL_INLINE_ANSWERS
    return job_start(
        kind="run-pool",
        label=_("Pooling of run %(name)s") % {"name": repr(run.name)},
        func="evaluation.run_jobs.run_pool",
        user=user,
        collection_id=run.collection_id,
        conflict=Conflict.SHARED,
        params={"run": run.pk},
        inline=inline,
    )


def _organizer(ctx: JobContext, collection: Collection) -> AbstractBaseUser:
    user = _user(ctx)
    try:
        require_role(user, collection, Role.ORGANIZER)
    except PermissionDenied as e:
        raise JobFailed(str(e) or _("Only the collection's organizers may pool runs.")) from None
    return user


def run_pool(ctx: JobContext) -> dict:
    """Send one run's unjudged answers to the assessors' pool (``services.run_pool``)."""
    run = (
        Run.objects.active()
        .select_related("collection")
        .filter(pk=ctx.params["run"], collection_id=ctx.job.collection_id)
        .first()
    )
    if run is None:
        raise JobFailed(_("The run is gone or was withdrawn; nothing was pooled."))
    user = _organizer(ctx, run.collection)
    ctx.progress.phase(str(POOL_STEPS["questions"]), unit="questions")
    try:
        added = services.run_pool(
            run=run, by=user, progress=_Steps(ctx.progress, POOL_STEPS, "questions")
        )
    except PermissionDenied as e:
        raise JobFailed(str(e)) from None
    return {
        "message": _("%(added)s unjudged answer(s) of %(run)s sent to the assessors' pool.")
        % {"added": added, "run": run.name},
        "url": _run_url(run),
        "link": _("Open the run"),
        "run_id": run.pk,
        "added": added,
    }


def runs_pool_all_start(
    *, collection: Collection, user: AbstractBaseUser, inline: bool | None = None
) -> Job:
    """Start pooling every run of ``collection`` (``runs_pool_all``), at once when they
    hold few answers."""
    if inline is None:
        answers = RunAnswer.objects.filter(run__collection=collection, run__withdrawn_at=None)
        inline = answers.count() <= POOL_INLINE_ANSWERS
    return job_start(
        kind="run-pool-all",
        label=_("Pooling of all runs"),
        func="evaluation.run_jobs.runs_pool_all",
        user=user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        inline=inline,
    )


def runs_pool_all(ctx: JobContext) -> dict:
    """Pool every run of the collection that is not withdrawn, in upload order, in one
    transaction (all or nothing): the same strings, variants and audit trail as pooling
    each run from its page one after another."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    user = _organizer(ctx, collection)
    runs = Run.objects.active().filter(collection=collection).count()
    ctx.progress.phase(_("Pooling the runs"), total=runs, unit="runs")
    pooled = [
        {"run_id": run.pk, "run": run.name, "added": added}
        for run, added in services.runs_pool_each(
            collection=collection, by=user, progress=ctx.progress
        )
    ]
    added = sum(p["added"] for p in pooled)
    return {
        "message": _("%(added)s unjudged answer(s) of %(runs)s run(s) sent to the assessors' pool.")
        % {"added": added, "runs": len(pooled)},
        "url": reverse("evaluation:run-list", args=[collection.slug]),
        "link": _("Open the runs"),
        "added": added,
        "runs": pooled,
    }
