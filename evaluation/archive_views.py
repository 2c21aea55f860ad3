"""The collection archive's pages: "Export archive" of a collection (organizers) and
"Import archive" (whoever may create a collection).  Each starts a background job
(``archive_jobs``): the page's form gives way to the job's panel, whose bar follows it and
which offers the archive's download (the export) or the new collection (the import) when
it is done; a small one runs in the request."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from annotate.models import Collection, Role
from annotate.permissions import can_create_collection, require_role
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from config.text import CONTROL_CHARACTERS
from config.uploads import check_upload_size
from jobs.models import Conflict, Job, JobStatus
from jobs.services import JobRefused, job_start
from jobs.views import job_started

from . import archive_jobs


class ArchiveImportForm(forms.Form):
    file = forms.FileField(
        label=_("Archive"),
        help_text=_("a zip made by Export archive or manage.py export_collection"),
    )
    slug = forms.SlugField(
        max_length=80,
        label=_("Slug"),
        help_text=_("the new collection's short name in its address"),
    )
    name = forms.CharField(
        max_length=200,
        required=False,
        label=_("Name"),
        help_text=_("empty: the name the archive gives"),
    )

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.IMPORT_MAX_MB, "archives")

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if Collection.objects.filter(slug=slug).exists():
            raise forms.ValidationError(
                gettext("A collection with the slug %(slug)s already exists.")
                % {"slug": repr(slug)}
            )
        return slug

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if CONTROL_CHARACTERS.search(name):
            raise forms.ValidationError(gettext("The name may not hold control characters."))
        return name


def _recent(user, kind: str, collection: Collection | None = None) -> list[Job]:
    jobs = Job.objects.filter(user=user, kind=kind).defer("input")
    if collection is not None:
        jobs = jobs.filter(collection=collection)
    return list(jobs.order_by("-created_at")[:5])


@require_http_methods(["GET", "POST"])
def archive_export(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Export the collection to one archive: a job whose file the organizer downloads."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    error = ""
    if request.method == "POST":
        try:
            job = job_start(
                kind="archive-export",
                label=gettext("Archive of %(name)s") % {"name": collection.name},
                func="evaluation.archive_jobs.export_archive",
                user=request.user,
                collection_id=collection.pk,
                conflict=Conflict.SHARED,
                inline=archive_jobs.export_small(collection),
            )
        except JobRefused as e:
            error = str(e)
        else:
            return job_started(request, job)
    return render_page(
        request,
        "evaluation/archive_export.html",
        {
            "collection": collection,
            "error": error,
            "jobs": _recent(request.user, "archive-export", collection),
        },
        partial="export-form",
        status=409 if error else 200,
    )


@require_http_methods(["GET", "POST"])
def archive_import(request: HtmxHttpRequest) -> HttpResponse:
    """A new collection from an archive, imported by a job; a refused archive shows every
    problem with its member and line, as the command prints them."""
    if not can_create_collection(request.user):
        raise PermissionDenied(
            gettext(
                "Only organizers may create collections. Ask an administrator for the right "
                "to create one."
            )
        )
    posted = request.method == "POST"
    form = ArchiveImportForm(request.POST, request.FILES) if posted else ArchiveImportForm()
    errors: list[dict] = []
    message = ""
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        data = upload.read()
        try:
            job = job_start(
                kind="archive-import",
                label=gettext("Import of %(file)s as %(slug)s")
                % {"file": upload.name, "slug": form.cleaned_data["slug"]},
                func="evaluation.archive_jobs.import_archive",
                user=request.user,
                conflict=Conflict.NONE,
                params={"slug": form.cleaned_data["slug"], "name": form.cleaned_data["name"]},
                input=data,
                input_name=upload.name,
                inline=len(data) < archive_jobs.INLINE_IMPORT_BYTES,
            )
        except JobRefused as e:
            message = str(e)
        else:
            if job.status == JobStatus.SUCCEEDED:
                messages.success(request, job.message)
                return redirect_to(request, job.result["url"])
            if job.status == JobStatus.FAILED:
                message, errors = job.message, job.errors
            else:
                return job_started(request, job)
    return render_page(
        request,
        "evaluation/archive_import.html",
        {
            "form": form,
            "message": message,
            "errors": errors,
            "max_mb": settings.IMPORT_MAX_MB,
            "jobs": _recent(request.user, "archive-import"),
        },
        partial="import-form",
    )
