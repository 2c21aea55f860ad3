"""``manage.py export_collection SLUG ARCHIVE.zip``: a whole collection to one archive (the
job function of the page's "Export archive", run here with a progress bar)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Collection
from evaluation.management.progress import issue_lines, run_inline
from jobs.models import JobStatus


class Command(BaseCommand):
    help = "Export a collection (levels, members, questions, judgments, events, runs) to a zip."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("archive")

    def handle(self, *args, **opts):
        try:
            collection = Collection.objects.get(slug=opts["slug"])
        except Collection.DoesNotExist as e:
            raise CommandError(f"no collection {opts['slug']!r}") from e
        job = run_inline(
            kind="archive-export",
            label=f"Archive of {collection.name}",
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
        self.stdout.write(self.style.SUCCESS(f"Wrote {opts['archive']} ({len(data)} bytes)."))
