"""The collection archive as background jobs (issue 24): ``export_archive`` writes a
collection's archive as the job's file, ``import_archive`` creates a collection from the
uploaded archive.  The pages start them (``archive_views``), the management commands run
the same functions inline (``export_collection``, ``import_collection``).

A job started from a page runs as the user who started it, checked here as the pages check
it (an organizer of the collection exports it; whoever may create a collection imports one,
and becomes an organizer of it); a command's job (``params["cli"]``) has the command line's
trust and no user.
"""

from __future__ import annotations

import io

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotate.models import Collection, Role
from annotate.permissions import can_create_collection, require_role
from evaluation.archive.exporting import collection_export_to
from evaluation.archive.importing import collection_import
from evaluation.metrics import InputError
from evaluation.models import RunAnswer
from jobs.runner import JobContext, JobFailed

ARCHIVE_TYPE = "application/zip"
# what the archive's progress units are shown as, one phase each
PHASES = {
    "rows": gettext_lazy("Writing the archive"),
    "members read": gettext_lazy("Reading the archive"),
    "rows read": gettext_lazy("Checking the rows"),
    "run answers checked": gettext_lazy("Checking the run answers"),
    "rows written": gettext_lazy("Writing"),
}
# a collection with fewer rows than this is exported in the request (well under a second)
INLINE_EXPORT_ROWS = 20_000
# an archive smaller than this is imported in the request
INLINE_IMPORT_BYTES = 200 * 1024


class _Phases:
    """The ``progress(done, total, unit)`` of the archive's functions, each unit a phase of
    the job's bar (``PHASES``)."""

    def __init__(self, ctx: JobContext, prefix: str = ""):
        self.ctx, self.prefix, self.unit = ctx, prefix, None

    def __call__(self, done: int, total: int | None = None, unit: str | None = None) -> None:
        if unit != self.unit:
            self.unit = unit
            label = str(PHASES.get(unit or "", unit or ""))
            if unit == "rows written" and self.prefix:
                label = f"{self.prefix} {label.lower()}"
            self.ctx.progress.phase(label, total=total, unit=unit or "")
        self.ctx.progress(done, total, unit)


def _from_cli(ctx: JobContext) -> bool:
    return bool(ctx.params.get("cli"))


def export_small(collection: Collection) -> bool:
    """Whether the collection's archive is made in the request (a few thousand rows)."""
    answers = RunAnswer.objects.filter(run__collection=collection, run__withdrawn_at__isnull=True)
    return answers[:INLINE_EXPORT_ROWS].count() + collection.questions.count() < INLINE_EXPORT_ROWS


def export_archive(ctx: JobContext) -> dict:
    """The archive of the job's collection, kept as the job's file (its owner downloads
    it from the job's panel)."""
    collection = Collection.objects.get(pk=ctx.job.collection_id)
    if not _from_cli(ctx):
        if ctx.job.user is None:
            raise JobFailed(_("The user who asked for this archive no longer exists."))
        try:
            require_role(ctx.job.user, collection, Role.ORGANIZER)
        except PermissionDenied as e:
            raise JobFailed(_("Only an organizer of the collection may export it.")) from e
    buf = io.BytesIO()
    rows = collection_export_to(buf, collection=collection, progress=_Phases(ctx))
    data = buf.getvalue()
    output = ctx.save_output(f"{collection.slug}.zip", data, ARCHIVE_TYPE)
    return {
        "message": _("The archive of %(name)s: %(rows)s rows in %(size)s MB.")
        % {
            "name": collection.name,
            "rows": number_format(rows, force_grouping=True),
            "size": f"{len(data) / 1048576:.1f}",
        },
        "url": reverse("jobs:job-output", args=[ctx.job.pk, output.pk]),
        "link": _("Download the archive"),
        "output": output.pk,
        "rows": rows,
        "bytes": len(data),
    }


def import_archive(ctx: JobContext) -> dict:
    """A new collection (``params["slug"]``, ``params["name"]`` or the archive's name)
    from the uploaded archive; every problem of a refused archive, with its member and
    line, in the job's errors (nothing written)."""
    user = None
    if not _from_cli(ctx):
        user = ctx.job.user
        if user is None or not can_create_collection(user):
            raise JobFailed(_("Only organizers may create collections, from an archive too."))
    slug, name = ctx.params["slug"], ctx.params.get("name") or None
    try:
        collection = collection_import(
            data=ctx.input,
            slug=slug,
            name=name,
            filename=ctx.job.input_name or "archive.zip",
            progress=_Phases(ctx),
            organizer=user,
        )
    except InputError as e:
        raise JobFailed(
            _("The archive was not imported; nothing was written."),
            [{"file": i.file, "line": i.line, "message": i.message} for i in e.issues],
        ) from e
    questions, runs = collection.questions.count(), collection.runs.count()
    return {
        "message": _("Imported %(name)s (%(slug)s): %(questions)s questions, %(runs)s runs.")
        % {
            "name": collection.name,
            "slug": collection.slug,
            "questions": number_format(questions, force_grouping=True),
            "runs": number_format(runs, force_grouping=True),
        },
        "url": reverse("annotate:collection-detail", args=[collection.slug]),
        "link": _("Open the collection"),
        "slug": collection.slug,
        "questions": questions,
        "runs": runs,
    }
