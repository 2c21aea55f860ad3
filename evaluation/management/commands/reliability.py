"""``manage.py reliability``: the same options and code as the ``qa-reliability`` command
(``evaluation.metrics.reliability_cli``); needs no database."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.metrics import reliability_cli
from evaluation.metrics.cli import UsageError


class Command(BaseCommand):
    help = reliability_cli.DESCRIPTION
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        reliability_cli.add_arguments(parser)

    def handle(self, *args, **opts):
        try:
            reliability_cli.reliability(opts, self.stdout, self.stderr)
        except UsageError as e:
            raise CommandError(str(e), returncode=e.returncode) from e
