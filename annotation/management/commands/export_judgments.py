from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.exports import FORMATS, HISTORY_FORMATS, export_judgments
from kgpool.commands import KgpoolCommand, written_or_refused


class Command(KgpoolCommand):
    help = (
        "Export a campaign's judged test set (SPEC 4.3). labels: h<TAB>r<TAB>t<TAB>Y|N (sampled test triples + every "
        "finally labelled pool triple); positives: h<TAB>r<TAB>t; questions: qid<TAB>entity<TAB>relation; qrels: "
        "TREC `qid 0 entity rel` (final labels); jsonl / csv: full provenance; labels-origin: labels with an origin "
        "column; qrels-annotator: the qrels of one annotator's own answers (--annotator USER); readme: the datasheet; "
        "bundle: all of it in one folder (or -o FILE.tar.gz) with the KG's splits, checksums and dataset.json, "
        "loadable by import_judgments --bundle, PyKEEN and pandas (kgpool.bundle). Gold checks are never exported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--format", choices=(*FORMATS, "bundle"), default="labels")
        parser.add_argument("-o", "--output", help="File to write (default or '-': standard output)")
        parser.add_argument("--annotator", help="Username, for --format qrels-annotator")
        parser.add_argument("--with-history", action="store_true",
                            help="jsonl / csv: add each label's history (every version: who, when, old -> new, why)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        annotator = None
        if options["format"] == "bundle":
            self.bundle(campaign, options["output"])
            return
        if options["with_history"] and options["format"] not in HISTORY_FORMATS:
            raise CommandError(f"--with-history goes with --format {' or '.join(HISTORY_FORMATS)}")
        if options["annotator"] and options["format"] != "qrels-annotator":  # it was silently ignored
            raise CommandError("--annotator goes with --format qrels-annotator (the other formats hold every "
                               "annotator's work)")
        if options["output"] == "-":  # the usual name of standard output (it wrote a file named '-')
            options["output"] = None
        if options["format"] == "qrels-annotator":
            from django.contrib.auth import get_user_model

            if not options["annotator"]:
                raise CommandError("--format qrels-annotator needs --annotator USER")
            annotator = get_user_model().objects.filter(username=options["annotator"]).first()
            if annotator is None:
                raise CommandError(f"no user {options['annotator']!r}")
        if options["output"]:
            path = Path(options["output"])
            with written_or_refused(path) as out:  # Ctrl-C or an error leaves no half-written file
                count = export_judgments(campaign, options["format"], out, annotator=annotator,
                                         with_history=options["with_history"])
            self.stderr.write(f"{count} {options['format']} records written to {path}")
        else:
            count = export_judgments(campaign, options["format"], self.stdout, annotator=annotator,
                                         with_history=options["with_history"])
            self.stderr.write(f"{count} {options['format']} records")

    def bundle(self, campaign, output: str | None) -> None:
        from annotation.services.bundles import export_bundle
        from kgpool.bundle import BundleError

        if not output:
            raise CommandError("--format bundle needs -o DIR (a new folder) or -o FILE.tar.gz")
        try:
            path, files = export_bundle(campaign, output)
        except BundleError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"bundle of {campaign.name} written to {path}: {len(files)} files and checksums.sha256")
