from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.errors import AnnotationError
from annotation.services.gold import add_gold_items
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_float, bounded_int


class Command(KgpoolCommand):
    help = (
        "Mix gold checks from the KG into a campaign's queue at its gold rate (issue 8): true train triples (Y) and "
        "type-violating or cardinality-impossible candidates (N). Run it once the items to judge are settled "
        "(after filter_pool / imports); running it again tops up or trims."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--rate", type=bounded_float(0, 1),
                            help="Set the campaign's gold rate first (0 <= rate < 1)")
        parser.add_argument("--threshold", type=bounded_float(0, 1),
                            help="Set the campaign's gold accuracy warning threshold")
        parser.add_argument("--seed", type=bounded_int(0, INT32_MAX), default=0)

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
            if options["rate"] is not None:
                if not 0 <= options["rate"] < 1:
                    raise AnnotationError("--rate must be in [0, 1)")
                campaign.gold_rate = options["rate"]
                campaign.save(update_fields=["gold_rate"])
            if options["threshold"] is not None:
                campaign.gold_threshold = options["threshold"]
                campaign.save(update_fields=["gold_threshold"])
            report = add_gold_items(campaign, seed=options["seed"])
        except (Campaign.DoesNotExist, AnnotationError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{report.total} gold checks ({report.yes} Y, {report.no} N) for {report.human_items} items to judge "
            f"at rate {campaign.gold_rate}: {report.added} added, {report.removed} removed"
            + (f"; {report.shortfall} N check(s) could not be drawn" if report.shortfall else "")
        )
