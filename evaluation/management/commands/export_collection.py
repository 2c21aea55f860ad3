"""``manage.py export_collection SLUG ARCHIVE.zip``: a whole collection to one archive (the
job function of the page's "Export archive", run here with a progress bar)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_noop

from annotate.models import Collection
from evaluation.management.progress import issue_lines, run_inline
from jobs.models import JobStatus


class Command(BaseCommand):
    help = gettext_noop(
        "Export a collection (levels, members, questions, judgments, events, runs) to a zip."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.description = gettext(self.help)  # in the language the command runs in
        return parser

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("archive")

    def handle(self, *args, **opts):
        try:
            collection = Collection.objects.get(slug=opts["slug"])
        except Collection.DoesNotExist as e:
            raise CommandError(
                gettext("no collection %(slug)s") % {"slug": repr(opts["slug"])}
            ) from e
        job = run_inline(
            kind="archive-export",
            label=gettext("Archive of %(name)s") % {"name": collection.name},
            func="evaluation.archive_jobs.export_archive",
            stream=self.stderr,
            collection_id=collection.pk,
        )
        if job.status != JobStatus.SUCCEEDED:
            self.stderr.write(issue_lines(job))
            raise CommandError(job.message)
        output = job.outputs.get()
        data = bytes(output.data)
        Path(opts["archive"]).write_bytes(data)
        output.delete()  # the file is where the command was asked to put it
        self.stdout.write(
            self.style.SUCCESS(
                gettext("Wrote %(path)s (%(bytes)s bytes).")
                % {"path": opts["archive"], "bytes": len(data)}
            )
        )
