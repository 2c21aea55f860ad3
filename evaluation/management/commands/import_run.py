"""``manage.py import_run``: the run upload page on the command line (all or nothing).

The run is the owner's submission, under the rule of the page and the API
(``access.may_submit``): an organizer's run goes in at any time, a participant's only
while the collection is open for submissions, a non-member's never.  The command line
names the owner; it does not lift the rule.  It runs the upload job of the page and the
API (``evaluation.run_jobs.run_upload``) here, at once, with a progress bar on a terminal
(plain lines when the output is no terminal; none with ``-v0``)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Collection
from evaluation.access import require_may_submit
from evaluation.metrics import Issue
from evaluation.models import Run
from evaluation.run_jobs import run_upload_start
from jobs.models import JobStatus
from jobs.services import JobRefused
from jobs.terminal import TerminalProgress


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
        try:
            require_may_submit(owner, collection)
        except PermissionDenied as e:
            raise CommandError(f"{owner.get_username()}: {e}") from e
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CommandError(f"cannot read {path}: {e.strerror}") from e
        # the bar goes to the terminal (stderr, so a redirected stdout stays plain); the
        # plain lines, when there is no terminal, to stdout beside the result
        bar_stream = getattr(self.stderr, "_out", sys.stderr)
        with TerminalProgress(bar_stream, self.stdout, quiet=opts["verbosity"] < 1) as progress:
            try:
                job = run_upload_start(
                    collection=collection,
                    user=owner,
                    name=opts["name"] or path.stem,
                    data=data,
                    filename=path.name,
                    description=opts["description"],
                    fmt=opts["format"],
                    inline=True,
                    listener=progress,
                )
            except JobRefused as e:
                raise CommandError(str(e)) from e
        if job.status != JobStatus.SUCCEEDED:
            if not job.errors:
                raise CommandError(f"{owner.get_username()}: {job.message}")
            for e in job.errors:
                self.stderr.write(str(Issue(e["file"] or path.name, e["line"], e["message"])))
            raise CommandError(f"{len(job.errors)} error(s); the run was not imported")
        run = Run.objects.get(pk=job.result["run_id"])
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported run {run.name!r}: {job.result['answers']} answers ({run.format})."
            )
        )
