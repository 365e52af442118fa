from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from annotation.services.users import deactivate_user
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Deactivate a user (no login, no API token) and cancel their open hand-outs, whose items go back to the "
        "queue. Users who were given work are never deleted: their judgments are kept (the ORM refuses the delete)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: options["username"]}).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        report = deactivate_user(user)
        self.stdout.write(report.message())
