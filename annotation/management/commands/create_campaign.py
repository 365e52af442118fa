from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from annotation.models import Role
from annotation.selectors.campaigns import pool_by_ref
from annotation.services.campaigns import add_member, create_campaign
from annotation.services.errors import AnnotationError
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_float, bounded_int
from pooling.models import Pool


class Command(KgpoolCommand):
    help = (
        "Create a judging campaign over a pool: one item per pool entry, default question templates. POOL is "
        "KG/SAMPLE/POOL or the pool id. --admin/--annotator/--adjudicator/--expert USER (repeatable) add members."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("pool", help="KG/SAMPLE/POOL or pool id")
        parser.add_argument("--domains", help="Comma-separated allowed source domains (default: wikipedia.org, ...)")
        parser.add_argument("--timeout", type=bounded_int(1, INT32_MAX), default=1800,
                            help="Seconds before an unanswered hand-out returns")
        parser.add_argument("--gold-rate", type=bounded_float(0, 1), default=0.05)
        for role in Role.values:
            parser.add_argument(f"--{role}", action="append", default=[], metavar="USER")

    def handle(self, *args, **options) -> None:
        members = self._members(options)  # every name checked before anything is written
        try:
            pool = pool_by_ref(options["pool"])
            domains = [d for d in options["domains"].split(",")] if options["domains"] else None
            with transaction.atomic():  # a member that cannot be added leaves no campaign behind
                campaign = create_campaign(options["name"], pool, allowed_domains=domains,
                                           assignment_timeout_s=options["timeout"], gold_rate=options["gold_rate"])
                for user, role in members:
                    add_member(campaign, user, role)
        except (Pool.DoesNotExist, AnnotationError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"campaign {campaign.name}: {campaign.items.count()} items on pool {pool}")

    @staticmethod
    def _members(options) -> list[tuple[AbstractBaseUser, str]]:
        """(user, role) for every --ROLE USER option; CommandError naming the users that do not exist."""
        wanted = [(username, role) for role in Role.values for username in options[role]]
        users = {u.get_username(): u for u in get_user_model().objects.filter(username__in={n for n, _ in wanted})}
        missing = sorted({name for name, _ in wanted if name not in users})
        if missing:
            raise CommandError(f"no user {', '.join(map(repr, missing))}: no campaign created")
        return [(users[name], role) for name, role in wanted]
