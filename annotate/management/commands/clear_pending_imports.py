"""``manage.py clear_pending_imports``: delete import previews never confirmed.

Expired previews are also deleted whenever a preview is made or confirmed; run this from
cron (beside ``clearsessions``) so that a quiet server does not keep large files around.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotate.imports import PENDING_TTL, pending_imports_clear


class Command(BaseCommand):
    help = f"Delete import previews older than {PENDING_TTL} that were never confirmed."

    def handle(self, *args, **opts):
        n = pending_imports_clear()
        self.stdout.write(f"deleted {n} expired import preview{'s' if n != 1 else ''}")
