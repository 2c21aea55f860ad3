"""``manage.py import_judgments SLUG FILE [--kind judgments|questions|flat|layers]
[--dry-run] [--mark-done]``: the import page's job (``annotate.import_jobs.run_import``)
run here, with its progress on stderr (a bar on a terminal, plain lines otherwise)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.import_jobs import import_file_start, issues_of
from annotate.imports import KINDS
from annotate.models import Collection
from jobs.models import JobStatus
from jobs.services import JobRefused
from jobs.terminal import terminal_progress


class Command(BaseCommand):
    help = (
        "Import a judgments CSV (or questions CSV / flat answer list / layers CSV) into a "
        "collection; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("collection", help="collection slug")
        parser.add_argument("file")
        parser.add_argument("--kind", choices=sorted(KINDS), default="judgments")
        parser.add_argument("--dry-run", action="store_true", help="validate and preview only")
        parser.add_argument(
            "--mark-done",
            action="store_true",
            help="judgments: mark the questions the file leaves with no unjudged string done",
        )

    def handle(self, *args, **opts):
        try:
            collection = Collection.objects.get(slug=opts["collection"])
        except Collection.DoesNotExist:
            raise CommandError(f"no collection {opts['collection']!r}") from None
        path = Path(opts["file"])
        data = path.read_bytes()
        try:
            with terminal_progress(self.stderr) as listener:
                job = import_file_start(
                    collection=collection,
                    user=None,
                    kind=opts["kind"],
                    data=data,
                    filename=path.name,
                    mark_done=opts["mark_done"],
                    dry_run=opts["dry_run"],
                    inline=True,
                    listener=listener,
                )
        except JobRefused as e:
            raise CommandError(f"nothing imported: {e}") from None
        if job.status != JobStatus.SUCCEEDED:
            if not job.errors:
                raise CommandError(job.message)
            issues = issues_of(job)
            raise CommandError(
                f"nothing imported, {len(issues)} error(s):\n" + "\n".join(map(str, issues))
            )
        for name, n in job.result["counts"]:
            self.stdout.write(f"{name}: {n}")
        self.stdout.write(
            self.style.SUCCESS("validated (dry run)" if opts["dry_run"] else "imported")
        )
