from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign
from annotation.selectors.agreement import is_defined
from annotation.selectors.audit import audit_report
from annotation.selectors.campaigns import campaign_by_ref
from annotation.services.audit import draw_audit_sample
from annotation.services.errors import AnnotationError
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int


class Command(KgpoolCommand):
    help = (
        "Expert audit (SPEC 4.2): --draw N draws a stratified random sample of finished items (half final Y, half "
        "N, seeded) for experts to relabel blind; without --draw, report the agreement between the experts' labels "
        "and the final labels (percent, Cohen's kappa)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--draw", type=bounded_int(1, INT32_MAX), metavar="N",
                            help="Draw a sample of N items (e.g. 200)")
        parser.add_argument("--seed", type=bounded_int(0, INT32_MAX), default=0)
        parser.add_argument("--replace", action="store_true", help="Redraw (only while no expert has answered)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
            if options["draw"]:
                drawn = draw_audit_sample(campaign, options["draw"], seed=options["seed"], replace=options["replace"])
                self.stdout.write(f"audit sample of {drawn.drawn} items ({drawn.yes} Y, {drawn.no} N) drawn from "
                                  f"{drawn.available_yes} Y and {drawn.available_no} N finished items")
                return
        except (Campaign.DoesNotExist, AnnotationError) as exc:
            raise CommandError(str(exc)) from None
        report = audit_report(campaign)
        self.stdout.write(f"audit sample: {report.sample} items, {report.answered} expert answers")
        for title, rows in (("overall", [report.overall] if report.overall else []), ("by final label", report.by_final_label),
                            ("by origin", report.by_origin), ("by expert", report.by_expert)):
            for row in rows:
                kappa = f"{row.kappa:.3f}" if is_defined(row.kappa) else "n/a"
                self.stdout.write(f"  {title} {row.group}: {row.agree}/{row.items} = {100 * row.percent:.1f}% kappa {kappa}")
