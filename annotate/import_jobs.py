"""A collection's imports as background jobs (issue 24; docs/formats.md): the confirmation
of a file previewed on the import page, a file given to ``manage.py import_judgments``,
and a layers CSV imported from the agreement page.

One job function per import, ``run_import`` (questions, judgments, flat and layers files,
through ``imports.collection_import``) and ``run_layers_import`` (``layer_io``'s layers
import), each writing in its service's one transaction (all or nothing) and failing with
every error of the file, each with its file and line, as the inline path showed them.  A
small file runs at once in the request (``INLINE_BYTES``); a larger one runs on a worker
while the page shows its bar: lines read, then questions written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db.models.functions import Length
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from evaluation.metrics import Issue
from jobs.models import Conflict, Job
from jobs.progress import Progress, Snapshot
from jobs.runner import JobContext, JobFailed
from jobs.services import job_start

from .import_plans import ImportPlan
from .imports import (
    ImportRefused,
    PendingImportRefused,
    collection_import,
    import_plan,
    pending_import_confirm,
)
from .layer_io import layers_import
from .models import Collection, PendingImport, Role
from .permissions import require_role

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

# a file this small is imported in the request (well under a second: about 2,000 lines of
# a judgments CSV); a larger one waits for a worker, its bar on the page
INLINE_BYTES = 100_000

RUN_IMPORT = "annotate.import_jobs.run_import"
RUN_LAYERS_IMPORT = "annotate.import_jobs.run_layers_import"

# what the write of each kind of file counts on the bar (the plan's counts that add up to it)
WRITTEN: dict[str, tuple[tuple[str, ...], str]] = {
    "questions": (("questions to create", "questions to update"), "questions"),
    "flat": (("questions concerned",), "questions"),
    "judgments": (("questions with judgments",), "questions"),
    "layers": (("layers to create", "layers to replace"), "layers"),
}


def phased(progress: Progress, labels: Mapping[str, str]) -> Callable[..., None]:
    """A service function's ``progress(done, total, unit)`` for a job's bar: a new unit
    starts a new phase (its counts from zero), named ``labels[unit]``."""
    state: dict[str, str | None] = {"unit": None}

    def report(done: int, total: int | None = None, unit: str | None = None) -> None:
        if unit is not None and unit != state["unit"]:
            state["unit"] = unit
            progress.phase(labels.get(unit, unit.capitalize()), total=total, unit=unit)
        progress(done, total, unit)

    return report


def errors_of(issues: list[Issue]) -> list[dict[str, Any]]:
    return [{"file": i.file, "line": i.line, "message": i.message} for i in issues]


def issues_of(job: Job) -> list[Issue]:
    """The errors of a failed import job as the engine's issues (``file:line: message``)."""
    return [Issue(e.get("file") or "", e.get("line"), e.get("message", "")) for e in job.errors]


def _refused(issues: list[Issue]) -> JobFailed:
    n = len(issues)
    name = issues[0].file if issues else gettext("the file")
    message = ngettext(
        "%(name)s: %(n)s error, nothing imported.", "%(name)s: %(n)s errors, nothing imported.", n
    )
    return JobFailed(message % {"name": name, "n": n}, errors_of(issues))


def _collection(ctx: JobContext) -> Collection:
    """The job's collection, once more checked to be its starter's to import into (their
    role may have changed while the job waited); a command's job has no user to check."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    if ctx.job.user is not None:
        try:
            require_role(ctx.job.user, collection, Role.ORGANIZER)
        except PermissionDenied:
            raise JobFailed(
                gettext("Nothing was imported: you are no longer an organizer of this collection.")
            ) from None
    return collection


def _done(ctx: JobContext, collection: Collection, plan: ImportPlan, filename: str) -> dict:
    keys, unit = WRITTEN.get(plan.kind, ((), "questions"))
    written = sum(plan.counts.get(k, 0) for k in keys)
    ctx.progress(written, written, unit)
    summary = ", ".join(f"{gettext(k)}: {v}" for k, v in plan.counts.items())
    return {
        "message": gettext("Imported %(name)s (%(summary)s).")
        % {"name": filename, "summary": summary},
        "url": reverse("annotate:collection-detail", args=[collection.slug]),
        "link": gettext("Open the collection"),
        "kind": plan.kind,
        # pairs: a JSON object's keys lose their order in PostgreSQL's jsonb
        "counts": list(plan.counts.items()),
    }


def run_import(ctx: JobContext) -> dict:
    """The job of an import: the preview ``params["token"]`` confirmed (the import page),
    or the job's input as a ``params["kind"]`` file (a command; ``dry_run`` checks it
    only).  Fails with every error of the file; writes all or nothing."""
    p = ctx.params
    collection = _collection(ctx)
    filename = p.get("filename") or ctx.job.input_name or gettext("the file")
    report = phased(
        ctx.progress,
        {
            "lines": gettext("Reading %(name)s") % {"name": filename},
            "questions": gettext("Writing"),
        },
    )
    try:
        if p.get("token"):
            if ctx.job.user is None:
                raise JobFailed(
                    gettext("Nothing was imported: the user who previewed the file is gone.")
                )
            pending, plan = pending_import_confirm(
                token=p["token"],
                collection=collection,
                user=ctx.job.user,
                mark_done=bool(p.get("mark_done")),
                progress=report,
            )
            filename = pending.filename
        elif p.get("dry_run"):
            ctx.progress.phase(gettext("Checking %(name)s") % {"name": filename})
            plan = import_plan(
                collection=collection, kind=p["kind"], data=ctx.input, filename=filename
            )
            if not plan.ok:
                raise ImportRefused(plan.issues)
            counts = list(plan.counts.items())
            message = gettext("Checked %(name)s: nothing written.") % {"name": filename}
            return {"message": message, "counts": counts}
        else:
            plan = collection_import(
                collection=collection,
                kind=p["kind"],
                data=ctx.input,
                filename=filename,
                by=ctx.job.user,
                mark_done=bool(p.get("mark_done")),
                progress=report,
            )
    except PendingImportRefused as e:
        raise JobFailed(str(e)) from None
    except ImportRefused as e:
        raise _refused(e.issues) from None
    return _done(ctx, collection, plan, filename)


def run_layers_import(ctx: JobContext) -> dict:
    """The job of a layers CSV imported from the agreement page (``layer_io``): every
    error of the file, or the layers replaced by its rows."""
    collection = _collection(ctx)
    filename = ctx.job.input_name or gettext("the file")
    ctx.progress.phase(gettext("Importing %(name)s") % {"name": filename})
    result = layers_import(
        collection=collection, data=ctx.input, filename=filename, by=ctx.job.user
    )
    if result.issues:
        raise _refused(result.issues)
    ctx.progress(result.layers, result.layers, "layers")
    return {
        "message": gettext("Imported %(judgments)s judgments in %(layers)s layers.")
        % {"judgments": result.judgments, "layers": result.layers},
        "url": reverse("annotate:collection-agreement", args=[collection.slug]),
        "link": gettext("Open the agreement page"),
    }


# -- starting them ------------------------------------------------------------------------------
def import_confirm_start(
    *, collection: Collection, user: AbstractBaseUser, token: str, mark_done: bool
) -> Job:
    """Start the confirmation of the preview ``token`` (at once when its file is small).
    Raises ``JobRefused`` while a job that excludes imports runs on the collection."""
    pending = (
        PendingImport.objects.filter(token=token or "", collection=collection, user=user)
        .annotate(size=Length("data"))
        .values("filename", "size")
        .first()
    )
    filename = pending["filename"] if pending else ""
    return job_start(
        kind="import",
        label=gettext("Import of %(name)s into %(collection)s")
        % {"name": filename or gettext("a previewed file"), "collection": collection.name},
        func=RUN_IMPORT,
        user=user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        params={"token": token, "mark_done": mark_done, "filename": filename},
        inline=pending is None or (pending["size"] or 0) <= INLINE_BYTES,
    )


def import_file_start(
    *,
    collection: Collection,
    user: AbstractBaseUser | None,
    kind: str,
    data: bytes,
    filename: str,
    mark_done: bool = False,
    dry_run: bool = False,
    inline: bool | None = None,
    listener: Callable[[Snapshot], None] | None = None,
) -> Job:
    """Start the import of ``data`` as a ``kind`` file (inline: a command, or a small file).
    Raises ``JobRefused`` while a job that excludes imports runs on the collection."""
    return job_start(
        kind="import",
        label=(
            gettext("Check of %(name)s into %(collection)s")
            if dry_run
            else gettext("Import of %(name)s into %(collection)s")
        )
        % {"name": filename, "collection": collection.name},
        func=RUN_IMPORT,
        user=user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        params={"kind": kind, "mark_done": mark_done, "dry_run": dry_run},
        input=data,
        input_name=filename,
        inline=len(data) <= INLINE_BYTES if inline is None else inline,
        listener=listener,
    )


def layers_import_start(
    *, collection: Collection, user: AbstractBaseUser, data: bytes, filename: str
) -> Job:
    """Start the import of a layers CSV from the agreement page (at once when small)."""
    return job_start(
        kind="layers_import",
        label=gettext("Layers import of %(name)s into %(collection)s")
        % {"name": filename, "collection": collection.name},
        func=RUN_LAYERS_IMPORT,
        user=user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        input=data,
        input_name=filename,
        inline=len(data) <= INLINE_BYTES,
    )
