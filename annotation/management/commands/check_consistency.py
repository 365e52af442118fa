from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.consistency import check_campaign
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Re-check every judgment of a campaign for consistency (issue 8): several 'yes' for a single-answer "
        "question, a 'no' for a triple the KG states, a label differing from another campaign on the same KG. "
        "Flagged items go to the adjudication queue."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        report = check_campaign(campaign)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(report.by_kind.items())) or "none"
        self.stdout.write(f"{report.judgments} judgments checked: {len(report.flagged)} item(s) flagged "
                          f"({kinds}); {report.new_flags} new flag(s)")
