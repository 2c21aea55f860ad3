"""``manage.py import_collection ARCHIVE.zip --slug NEW``: a collection from an archive
(all or nothing; the job function of the "Import archive" page, run here with a progress
bar)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.management.progress import issue_lines, run_inline
from jobs.models import JobStatus


class Command(BaseCommand):
    help = "Import a collection archive made by export_collection as a new collection."

    def add_arguments(self, parser):
        parser.add_argument("archive")
        parser.add_argument("--slug", required=True, help="slug of the new collection")
        parser.add_argument("--name", help="name of the new collection (default: as exported)")

    def handle(self, *args, **opts):
        path = Path(opts["archive"])
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CommandError(f"cannot read {path}: {e.strerror}") from e
        job = run_inline(
            kind="archive-import",
            label=f"Import of {path.name} as {opts['slug']}",
            func="evaluation.archive_jobs.import_archive",
            stream=self.stderr,
            params={"slug": opts["slug"], "name": opts["name"]},
            input=data,
            input_name=path.name,
        )
        if job.status != JobStatus.SUCCEEDED:
            if job.errors:
                self.stderr.write(issue_lines(job))
                raise CommandError("the archive was not imported; nothing was written")
            raise CommandError(job.message)
        result = job.result
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported collection {result['slug']!r}: {result['questions']} questions, "
                f"{result['runs']} runs."
            )
        )
