"""``manage.py export_judgments SLUG [--what judgments|questions|events] [-o FILE]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotate.exports import export_events, export_judgments, export_questions
from annotate.models import Collection

EXPORTS = {"judgments": export_judgments, "questions": export_questions, "events": export_events}


class Command(BaseCommand):
    help = "Write a collection's judgments (or questions / audit events) as CSV."

    def add_arguments(self, parser):
        parser.add_argument("collection", help="collection slug")
        parser.add_argument("--what", choices=sorted(EXPORTS), default="judgments")
        parser.add_argument("-o", "--output", help="file (default: standard output)")

    def handle(self, *args, **opts):
        try:
            collection = Collection.objects.get(slug=opts["collection"])
        except Collection.DoesNotExist:
            raise CommandError(f"no collection {opts['collection']!r}") from None
        text = EXPORTS[opts["what"]](collection)
        if opts["output"]:
            with open(opts["output"], "w", encoding="utf-8", newline="") as f:
                f.write(text)
        else:
            self.stdout.write(text, ending="")
