"""``manage.py score``: score run files against judgments or qrels, like trec_eval.

Needs no database: the same options and code as the ``qa-score`` command
(``evaluation.metrics.cli``), which reads the files, runs the pure engine and prints the
scores.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.metrics import cli


class Command(BaseCommand):
    help = cli.DESCRIPTION
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_arguments(parser)

    def handle(self, *args, **opts):
        try:
            cli.score(opts, self.stdout, self.stderr)
        except cli.UsageError as e:
            raise CommandError(str(e), returncode=e.returncode) from e
