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
        "TREC `qid 0 entity rel` (final labels); jsonl / csv: full provenance; labels-origin: labels with an origin "
        "column; qrels-annotator: the qrels of one annotator's own answers (--annotator USER). Gold checks are never "
        "exported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--format", choices=FORMATS, default="labels")
        parser.add_argument("-o", "--output", help="File to write (default: standard output)")
        parser.add_argument("--annotator", help="Username, for --format qrels-annotator")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        annotator = None
        if options["format"] == "qrels-annotator":
            from django.contrib.auth import get_user_model

            if not options["annotator"]:
                raise CommandError("--format qrels-annotator needs --annotator USER")
            annotator = get_user_model().objects.filter(username=options["annotator"]).first()
            if annotator is None:
                raise CommandError(f"no user {options['annotator']!r}")
        if options["output"]:
            path = Path(options["output"])
            with path.open("w", encoding="utf-8", newline="") as out:
                count = export_judgments(campaign, options["format"], out, annotator=annotator)
            self.stderr.write(f"{count} {options['format']} records written to {path}")
        else:
            count = export_judgments(campaign, options["format"], self.stdout, annotator=annotator)
            self.stderr.write(f"{count} {options['format']} records")
