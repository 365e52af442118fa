from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.errors import AnnotationError
from annotation.services.imports import import_judgments
from kgpool.commands import KgpoolCommand, refused


class Command(KgpoolCommand):
    help = (
        "Load final labels made elsewhere (h<TAB>r<TAB>t<TAB>Y|N per line, keys of the campaign's KG) into a "
        "campaign: matching pool items get the label with origin 'imported'; sampled test triples are Y already; "
        "items judged in this campaign keep their labels. With --bundle PATH (a folder or .tar.gz written by "
        "export_judgments --format bundle) a whole judged set is loaded: its KG, sample, pool and a new campaign "
        "with every judgment and adjudication (by pseudonymous accounts) and its final labels."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", nargs="?", help="Campaign name or id")
        parser.add_argument("file", nargs="?", help="Judgments file")
        parser.add_argument("--bundle", help="Load a bundle (folder or .tar.gz) as a new campaign")
        parser.add_argument("--as", dest="as_name", help="With --bundle: the new campaign's name (default: the bundle's)")
        parser.add_argument("--strict", action="store_true", help="Refuse the file if a line is not in the pool or sample")

    def handle(self, *args, **options) -> None:
        if options["bundle"]:
            self.bundle(options)
            return
        if not options["campaign"] or not options["file"]:
            raise CommandError("give CAMPAIGN FILE, or --bundle PATH")
        try:
            campaign = campaign_by_ref(options["campaign"])
            report = import_judgments(campaign, options["file"], strict=options["strict"])
        except (Campaign.DoesNotExist, AnnotationError) as exc:
            raise refused(exc, "nothing was imported") from None
        self.stdout.write(
            f"{report.lines} lines: {report.labelled} items labelled, {report.sample} sampled test triples, "
            f"{report.kept} kept (judged here), {len(report.unknown)} not in the pool or sample"
        )
        if report.unknown:
            self.stdout.write("unknown lines: " + ", ".join(map(str, report.unknown[:20])))
        if report.sample_not_yes:
            self.stdout.write("sampled triples labelled N (ignored): lines " + ", ".join(map(str, report.sample_not_yes[:20])))

    def bundle(self, options) -> None:
        from annotation.services.bundle_import import BundleImportError, import_bundle

        if options["campaign"] or options["file"]:
            raise CommandError("--bundle takes no CAMPAIGN or FILE (the bundle names its campaign; see --as)")
        try:
            report = import_bundle(options["bundle"], as_name=options["as_name"])
        except BundleImportError as exc:
            raise refused(exc, "nothing was imported") from None
        self.stdout.write(f"campaign {report.campaign.name}: {report.labels} final labels, {report.judgments} "
                          f"judgments, {report.adjudications} adjudications")
        if report.created:
            self.stdout.write("created: " + ", ".join(report.created))
        if report.matched:
            self.stdout.write("already here (checked identical): " + ", ".join(report.matched))
