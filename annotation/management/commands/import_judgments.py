from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.errors import AnnotationError
from annotation.services.imports import import_judgments


class Command(BaseCommand):
    help = (
        "Load final labels made elsewhere (h<TAB>r<TAB>t<TAB>Y|N per line, keys of the campaign's KG) into a "
        "campaign: matching pool items get the label with origin 'imported'; sampled test triples are Y already; "
        "items judged in this campaign keep their labels."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("file", help="Judgments file")
        parser.add_argument("--strict", action="store_true", help="Refuse the file if a line is not in the pool or sample")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
            report = import_judgments(campaign, options["file"], strict=options["strict"])
        except (Campaign.DoesNotExist, AnnotationError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{report.lines} lines: {report.labelled} items labelled, {report.sample} sampled test triples, "
            f"{report.kept} kept (judged here), {len(report.unknown)} not in the pool or sample"
        )
        if report.unknown:
            self.stdout.write("unknown lines: " + ", ".join(map(str, report.unknown[:20])))
        if report.sample_not_yes:
            self.stdout.write("sampled triples labelled N (ignored): lines " + ", ".join(map(str, report.sample_not_yes[:20])))
