"""``manage.py create_api_token USERNAME [--name NAME]``: a token for a script, printed once
(the same as creating one on the user's "API tokens" page)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from api.services import TooManyTokens, api_token_create


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (it is not shown again)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--name",
            default="command line",
            help="what the token is for (shown on the user's tokens page)",
        )

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
        try:
            self.stdout.write(api_token_create(user=user, name=name).secret)
        except TooManyTokens as e:
            raise CommandError(str(e)) from e
