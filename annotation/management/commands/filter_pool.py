from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.lib.rules import RULES, parse_rules
from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref, pool_by_ref
from annotation.selectors.filtering import FilterReport, filter_preview
from annotation.services.filtering import apply_filter, revert_auto_labels
from pooling.models import Pool


class Command(BaseCommand):
    help = (
        "Trivial filtering (SPEC 4.1): label N automatically the pool entries that a rule rules out, and print the "
        "counts per rule and relation. POOL is KG/SAMPLE/POOL (e.g. fb15k-237/published/depth10) or the pool's "
        "numeric id; the labels go to every campaign on that pool (or only --campaign). With --dry-run nothing "
        "is written (works on a pool without campaigns). --revert sends the automatic negatives back to human "
        "judging (only those of --rules when given)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pool", help="KG/SAMPLE/POOL or pool id")
        parser.add_argument("--rules", default=",".join(RULES), help=f"Comma-separated rules (default: {','.join(RULES)})")
        parser.add_argument("--dry-run", action="store_true", help="Preview the counts; write nothing")
        parser.add_argument("--revert", action="store_true", help="Send automatically labelled items back to judging")
        parser.add_argument("--campaign", help="Only this campaign (name or id) on the pool")
        parser.add_argument("--threshold", type=float, default=1.5, help="Cardinality threshold (default 1.5)")

    def handle(self, *args, **options) -> None:
        try:
            pool = pool_by_ref(options["pool"])
            rules = parse_rules(options["rules"])
            campaigns = self._campaigns(pool, options["campaign"])
        except (Pool.DoesNotExist, Campaign.DoesNotExist, ValueError) as exc:
            raise CommandError(str(exc)) from None
        if options["revert"]:
            for campaign in campaigns:
                total = 0
                if options["dry_run"]:
                    self.stdout.write(f"{campaign.name}: --dry-run with --revert writes nothing")
                    continue
                for rule in rules:
                    total += revert_auto_labels(campaign, rule=rule)
                self.stdout.write(f"{campaign.name}: {total} automatic negatives sent back to human judging")
            return
        if options["dry_run"] or not campaigns:
            if not campaigns and not options["dry_run"]:
                raise CommandError(f"no campaign on pool {pool}; create one first (create_campaign) or use --dry-run")
            self._print(filter_preview(pool, rules, threshold=options["threshold"]), "would label")
            return
        for campaign in campaigns:
            report = apply_filter(campaign, rules, threshold=options["threshold"])
            self._print(report, f"{campaign.name}: labelled")
            self.stdout.write(f"{campaign.name}: {report.applied} items labelled N, {report.kept} left to people (already in judging)")

    def _campaigns(self, pool: Pool, ref: str | None) -> list[Campaign]:
        if ref:
            campaign = campaign_by_ref(ref)
            if campaign.pool_id != pool.pk:
                raise Campaign.DoesNotExist(f"campaign {campaign.name} is not on pool {pool}")
            return [campaign]
        return list(Campaign.objects.filter(pool=pool).order_by("name"))

    def _print(self, report: FilterReport, verb: str) -> None:
        self.stdout.write("relation\t" + "\t".join(report.rules) + "\tany")
        for key in sorted(report.by_relation):
            counts = report.by_relation[key]
            self.stdout.write(key + "\t" + "\t".join(str(counts.get(r, 0)) for r in report.rules) + f"\t{counts['any']}")
        totals = ", ".join(f"{rule} {report.by_rule.get(rule, 0)}" for rule in report.rules)
        self.stdout.write(f"{verb} {report.labelled} of {report.entries} entries N ({totals})")
        if report.type_source:
            self.stdout.write(f"types: {report.type_source}")
