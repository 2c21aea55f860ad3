"""``manage.py import_run``: the run upload page on the command line (all or nothing).

The run is the owner's submission, under the rule of the page and the API
(``access.may_submit``): an organizer's run goes in at any time, a participant's only
while the collection is open for submissions, a non-member's never.  The command line
names the owner; it does not lift the rule."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Collection
from evaluation.metrics import InputError
from evaluation.services import run_import


class Command(BaseCommand):
    help = "Import a QA or TREC run file into a collection."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--collection", required=True, help="collection slug")
        parser.add_argument("--owner", required=True, help="username of the run's owner")
        parser.add_argument("--name", help="run name (default: the file name)")
        parser.add_argument("--description", default="")
        parser.add_argument("--format", choices=["qa", "trec"], default=None)

    def handle(self, *args, **opts):
        try:
            collection = Collection.objects.get(slug=opts["collection"])
        except Collection.DoesNotExist as e:
            raise CommandError(f"no collection {opts['collection']!r}") from e
        try:
            owner = get_user_model().objects.get(username=opts["owner"])
        except get_user_model().DoesNotExist as e:
            raise CommandError(f"no user {opts['owner']!r}") from e
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CommandError(f"cannot read {path}: {e.strerror}") from e
        name = opts["name"] or path.stem
        try:
            run = run_import(
                collection=collection,
                owner=owner,
                name=name,
                data=data,
                filename=path.name,
                description=opts["description"],
                fmt=opts["format"],
            )
        except PermissionDenied as e:
            raise CommandError(f"{owner.get_username()}: {e}") from e
        except InputError as e:
            self.stderr.write(e.format(limit=None))
            raise CommandError(f"{len(e.issues)} error(s); the run was not imported") from e
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported run {run.name!r}: {run.answers.count()} answers ({run.format})."
            )
        )
