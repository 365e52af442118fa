from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.item_state import repair_items
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "Find the items whose stored state (status, label, origin, judgment and hand-out counters) differs from "
        "the state derived from their judgments, adjudication, open hand-outs and stored decisions, and fix them "
        "(each under its row lock). --dry-run only lists them. (check_consistency checks the answers themselves.)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaigns", nargs="*", help="Campaign names or ids (default: every campaign)")
        parser.add_argument("--dry-run", action="store_true", help="List the differences, change nothing")

    def handle(self, *args, **options) -> None:
        try:
            campaigns = [campaign_by_ref(ref) for ref in options["campaigns"]] or list(Campaign.objects.order_by("name"))
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        for campaign in campaigns:
            found = repair_items(campaign, dry_run=options["dry_run"])
            verb = "differ" if options["dry_run"] else "repaired"
            self.stdout.write(f"{campaign.name}: {len(found)} item(s) {verb}")
            for mismatch in found[:50]:
                self.stdout.write(f"  {mismatch.describe()}")
            if len(found) > 50:
                self.stdout.write(f"  ... and {len(found) - 50} more")
