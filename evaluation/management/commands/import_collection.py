"""``manage.py import_collection ARCHIVE.zip --slug NEW``: a collection from an archive
(all or nothing)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.archive.importing import collection_import
from evaluation.metrics import InputError


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
        try:
            c = collection_import(
                data=data, slug=opts["slug"], name=opts["name"], filename=path.name
            )
        except InputError as e:
            self.stderr.write(e.format(limit=50))
            raise CommandError("the archive was not imported; nothing was written") from e
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported collection {c.slug!r}: {c.questions.count()} questions, "
                f"{c.runs.count()} runs."
            )
        )
