"""``manage.py import_collection ARCHIVE.zip --slug NEW``: a collection from an archive
(all or nothing; the job function of the "Import archive" page, run here with a progress
bar)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_noop

from evaluation.management.progress import issue_lines, run_inline
from jobs.models import JobStatus


class Command(BaseCommand):
    help = gettext_noop(
        "Import a collection archive made by export_collection as a new collection."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.description = gettext(self.help)  # in the language the command runs in
        return parser

    def add_arguments(self, parser):
        parser.add_argument("archive")
        parser.add_argument("--slug", required=True, help=gettext("slug of the new collection"))
        parser.add_argument(
            "--name", help=gettext("name of the new collection (default: as exported)")
        )

    def handle(self, *args, **opts):
        path = Path(opts["archive"])
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CommandError(
                gettext("cannot read %(path)s: %(error)s") % {"path": path, "error": e.strerror}
            ) from e
        job = run_inline(
            kind="archive-import",
            label=gettext("Import of %(name)s as %(slug)s")
            % {"name": path.name, "slug": opts["slug"]},
            func="evaluation.archive_jobs.import_archive",
            stream=self.stderr,
            params={"slug": opts["slug"], "name": opts["name"]},
            input=data,
            input_name=path.name,
        )
        if job.status != JobStatus.SUCCEEDED:
            if job.errors:
                self.stderr.write(issue_lines(job))
                raise CommandError(gettext("the archive was not imported; nothing was written"))
            raise CommandError(job.message)
        result = job.result
        self.stdout.write(
            self.style.SUCCESS(
                gettext("Imported collection %(slug)s: %(questions)s questions, %(runs)s runs.")
                % {
                    "slug": repr(result["slug"]),
                    "questions": result["questions"],
                    "runs": result["runs"],
                }
            )
        )
