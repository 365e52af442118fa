from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.audit import AuditApplyReport, apply_expert_labels
from kgpool.commands import KgpoolCommand

SHOWN = 50


class Command(KgpoolCommand):
    help = (
        "Make the expert-audit labels final (SPEC 4.2): on every audit sample item the experts answered, the expert "
        "majority label replaces the final label where they differ (origin 'audit' in the exports); a tie between "
        "experts keeps the current label. With --dry-run nothing is written."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--dry-run", action="store_true", help="Show what would change; write nothing")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        report = apply_expert_labels(campaign, dry_run=options["dry_run"])
        self._print(campaign, report, "would change" if options["dry_run"] else "changed")

    def _print(self, campaign: Campaign, report: AuditApplyReport, verb: str) -> None:
        self.stdout.write(
            f"{campaign.name}: {report.answered} audited items; {verb} {len(report.changed)} final label(s) to the "
            f"expert majority, {report.confirmed} confirmed, {report.ties} tie(s) kept, {report.not_final} without "
            "a final label left alone"
        )
        for item_id, before, after in report.changed[:SHOWN]:
            self.stdout.write(f"  item {item_id}: {before} -> {after}")
        if len(report.changed) > SHOWN:
            self.stdout.write(f"  ... and {len(report.changed) - SHOWN} more")
