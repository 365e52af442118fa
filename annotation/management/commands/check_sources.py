from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.selectors.sources import doubled_sources
from annotation.services.source_repair import repair_doubled_sources
from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = (
        "List the judgments whose source URL holds a second http(s):// (a URL pasted after the prefilled one, "
        "e.g. https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/Steroid). --repair keeps the pasted "
        "URL, as an admin edit in the label history (the stored URL stays there)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaigns", nargs="*", help="Campaign names or ids (default: every campaign)")
        parser.add_argument("--repair", action="store_true", help="Replace each doubled URL by its inner URL")
        parser.add_argument("--by", metavar="USERNAME", help="The admin responsible for the repair (default: none, "
                                                             "recorded as made by a program)")

    def handle(self, *args, **options) -> None:
        try:
            campaigns = [campaign_by_ref(ref) for ref in options["campaigns"]] or None
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        by = None
        if options["by"]:
            by = get_user_model().objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"no user {options['by']!r}")
        found = doubled_sources(campaigns)
        self.stdout.write(f"{len(found)} judgment(s) with a doubled source URL")
        for doubled in found:
            self.stdout.write(f"  {doubled.describe()}")
        if not options["repair"] or not found:
            return
        outcome = repair_doubled_sources(found, by=by)
        self.stdout.write(f"repaired {len(outcome.repaired)}, left {len(outcome.left)}")
        for doubled, why in outcome.left:
            self.stdout.write(f"  left judgment {doubled.judgment.pk}: {why}")
        if outcome.left:
            raise CommandError(f"{len(outcome.left)} doubled source URL(s) could not be repaired (listed above)")
