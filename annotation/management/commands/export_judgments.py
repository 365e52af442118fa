from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.exports import FORMATS, export_judgments


class Command(BaseCommand):
    help = (
        "Export a campaign's judged test set (SPEC 4.3). labels: h<TAB>r<TAB>t<TAB>Y|N (sampled test triples + every "
        "finally labelled pool triple); positives: h<TAB>r<TAB>t; questions: qid<TAB>entity<TAB>relation; qrels: "
        "TREC `qid 0 entity rel`; jsonl / csv: full provenance. Gold checks are never exported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--format", choices=FORMATS, default="labels")
        parser.add_argument("-o", "--output", help="File to write (default: standard output)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if options["output"]:
            path = Path(options["output"])
            with path.open("w", encoding="utf-8", newline="") as out:
                count = export_judgments(campaign, options["format"], out)
            self.stderr.write(f"{count} {options['format']} records written to {path}")
        else:
            count = export_judgments(campaign, options["format"], self.stdout)
            self.stderr.write(f"{count} {options['format']} records")
