from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.campaign_archive import archive_campaign
from annotation.services.errors import AnnotationError
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Archive a campaign: write its backup, check that it reads back identical, then DELETE the campaign with "
        "its judgments, adjudications, expert reviews and history (one transaction). The only way a judged "
        "campaign leaves the database; restore_campaign brings it back. --confirm must repeat the name."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name")
        parser.add_argument("--confirm", required=True, metavar="NAME", help="The campaign's name again")
        parser.add_argument("-o", "--output", help="Backup file (default: VAR_DIR/archives/NAME-TIME.tar.gz)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
            stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
            path = Path(options["output"] or Path(settings.VAR_DIR) / "archives" / f"{campaign.name}-{stamp}.tar.gz")
            report = archive_campaign(campaign, path, confirm=options["confirm"])
        except (Campaign.DoesNotExist, AnnotationError, OSError) as exc:
            raise CommandError(str(exc)) from None
        deleted = ", ".join(f"{n:,} {label.split('.')[-1]}" for label, n in sorted(report.deleted.items()))
        self.stdout.write(f"campaign {campaign.name} archived to {report.backup.path} ({report.backup.summary()}); "
                          f"deleted: {deleted}")
