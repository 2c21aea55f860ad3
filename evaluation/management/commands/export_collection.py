"""``manage.py export_collection SLUG ARCHIVE.zip``: a whole collection to one archive."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Collection
from evaluation.archive.exporting import collection_export


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
        data = collection_export(collection=collection)
        Path(opts["archive"]).write_bytes(data)
        self.stdout.write(self.style.SUCCESS(f"Wrote {opts['archive']} ({len(data)} bytes)."))
