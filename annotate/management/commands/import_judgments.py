"""``manage.py import_judgments SLUG FILE [--kind judgments|questions|flat] [--dry-run]
[--mark-done]``."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.imports import KINDS, ImportRefused, collection_import, import_plan
from annotate.models import Collection


class Command(BaseCommand):
    help = (
        "Import a judgments CSV (or questions CSV / flat answer list) into a collection; "
        "all or nothing."
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
            if opts["dry_run"]:
                plan = import_plan(
                    collection=collection, kind=opts["kind"], data=data, filename=path.name
                )
                if not plan.ok:
                    raise ImportRefused(plan.issues)
            else:
                plan = collection_import(
                    collection=collection,
                    kind=opts["kind"],
                    data=data,
                    filename=path.name,
                    mark_done=opts["mark_done"],
                )
        except ImportRefused as e:
            raise CommandError(
                f"nothing imported, {len(e.issues)} error(s):\n"
                + "\n".join(str(i) for i in e.issues)
            ) from None
        for name, n in plan.counts.items():
            self.stdout.write(f"{name}: {n}")
        self.stdout.write(
            self.style.SUCCESS("validated (dry run)" if opts["dry_run"] else "imported")
        )
