from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.backup import backup_campaign
from annotation.services.errors import AnnotationError
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Write a campaign's portable backup (.tar.gz): its KG (rows and arrays), sample, systems and their rankings, "
        "pool, items, hand-outs, judgments, adjudications, expert reviews, label history and the users they name "
        "(no passwords). Restore it with restore_campaign, on SQLite or PostgreSQL."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("-o", "--output", required=True, help="Backup file to write (.tar.gz)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
            report = backup_campaign(campaign, options["output"])
        except (Campaign.DoesNotExist, AnnotationError, OSError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"campaign {campaign.name} backed up to {report.path}: {report.summary()}")
