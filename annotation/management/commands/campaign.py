"""``manage.py campaign apply FILE [--plan]`` / ``campaign export NAME`` / ``campaign evaluate NAME``."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from kgpool.commands import KgpoolCommand, device_name, one_line, positive_seconds, written_or_refused
from pooling.management.progress import StageProgress


class Command(KgpoolCommand):
    help = (
        "A whole campaign in one TOML file (see README, 'The campaign file'). `apply FILE` creates or updates "
        "everything the file declares (KG, systems, sample, pool, campaign, filters, templates, sources, members, "
        "gold checks, order, budget; the evaluation once judging is done), doing only what differs from what "
        "exists: applying it twice changes nothing, a deeper pool keeps every judgment. `--plan` shows the steps "
        "without writing anything. `export NAME` writes the file of an existing campaign. `evaluate NAME` starts "
        "the evaluation the file declares now."
    )
    interrupted_message = "interrupted: the steps already done are kept; apply the file again to finish"

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{apply,export,evaluate}")
        apply = actions.add_parser("apply", help="Apply a campaign file")
        apply.add_argument("file", type=Path, help="The campaign file (.toml)")
        apply.add_argument("--plan", action="store_true", help="Show what would be done; write nothing")
        apply.add_argument("--device", type=device_name,
                           help="cpu, cuda or cuda:N for training and ranking in this process")
        apply.add_argument("--timeout", type=positive_seconds, help="With workers: stop waiting after this many s")
        export = actions.add_parser("export", help="Write the campaign file of an existing campaign")
        export.add_argument("name", help="Campaign name or id")
        export.add_argument("-o", "--output", type=Path, help="File to write (default: standard output)")
        evaluate = actions.add_parser("evaluate", help="Start the evaluation the campaign file declares, now")
        evaluate.add_argument("name", help="Campaign name or id")

    def handle(self, *args: object, **options: object) -> None:
        getattr(self, options["action"])(options)

    def campaign(self, ref: str):
        from annotation.models import Campaign
        from annotation.selectors.campaigns import campaign_by_ref

        try:
            return campaign_by_ref(ref)
        except Campaign.DoesNotExist as exc:
            raise CommandError(one_line(str(exc))) from None

    def apply(self, options: dict) -> None:
        from annotation.lib.campaign_file import CampaignFileError, parse_campaign_file
        from annotation.services.campaign_apply import CampaignApplyError, apply_campaign, plan_campaign

        try:
            spec = parse_campaign_file(options["file"])
            if options["plan"]:
                plan = plan_campaign(spec)
                for line in plan.lines():
                    self.stdout.write(line)
                summary = (f"{len(plan.changes)} change(s), {len(plan.refusals)} refused"
                           if plan.changes or plan.refusals else "nothing to change")
                self.stdout.write(f"plan for {spec.name}: {summary}")
                if plan.refusals:
                    raise CommandError(f"{len(plan.refusals)} step(s) refused (!): applying would write nothing")
                return
            with StageProgress(enabled=options["verbosity"] >= 1) as progress:
                plan = apply_campaign(spec, path=str(options["file"].resolve()), progress=progress,
                                      log=self.stdout.write, device=options["device"], timeout=options["timeout"])
        except (CampaignFileError, CampaignApplyError) as exc:
            raise CommandError(one_line(str(exc))) from None
        changed = len(plan.changes)
        self.stdout.write(f"applied {spec.name}: " + (f"{changed} change(s)" if changed else "nothing to change"))

    def export(self, options: dict) -> None:
        from annotation.services.campaign_export import export_campaign_file

        campaign = self.campaign(options["name"])
        output = options["output"]
        text = export_campaign_file(campaign, base=output.resolve().parent if output else None)
        if output is None:
            self.stdout.write(text, ending="")
            return
        with written_or_refused(output) as out:  # Ctrl-C or an error leaves no half-written file
            out.write(text)
        self.stderr.write(f"campaign file of {campaign.name} written to {output}")

    def evaluate(self, options: dict) -> None:
        from annotation.services.campaign_evaluation import CampaignApplyError, start_declared_evaluation

        campaign = self.campaign(options["name"])
        try:
            run = start_declared_evaluation(campaign)
        except CampaignApplyError as exc:
            raise CommandError(one_line(str(exc))) from None
        self.stdout.write(f"evaluation run {run.pk} of {campaign.name}: {run.status}")
