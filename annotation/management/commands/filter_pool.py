from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from annotation.lib.rules import RULES, parse_rules
from annotation.lib.type_rule import TYPE_SOURCES, TypeOptions
from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_by_ref, pool_by_ref
from annotation.selectors.filtering import FilterReport, filter_preview
from annotation.selectors.reference_labels import ReferenceLabels, campaign_reference_labels, file_reference_labels
from annotation.services.errors import AnnotationError
from annotation.services.filtering import apply_filter, revert_auto_labels
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_float, bounded_int
from pooling.models import Pool, PoolEntry

SHOWN_POSITIVES = 20


class Command(KgpoolCommand):
    help = (
        "Trivial filtering (SPEC 4.1): label N automatically the pool entries that a rule rules out, and print the "
        "counts per rule and relation. POOL is KG/SAMPLE/POOL (e.g. fb15k-237/published/depth10) or the pool's "
        "numeric id; the labels go to every campaign on that pool (or only --campaign). With --dry-run nothing "
        "is written (works on a pool without campaigns) and each rule's precision is shown against the labelled "
        "triples at hand (--labels FILE, else the final labels of the KG's campaigns). --revert takes the rules "
        "(all, or --rules) off the automatic negatives: an item goes back to human judging only when no other "
        "applied rule still covers it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pool", help="KG/SAMPLE/POOL or pool id")
        parser.add_argument("--rules", default=",".join(RULES), help=f"Comma-separated rules (default: {','.join(RULES)})")
        parser.add_argument("--dry-run", action="store_true", help="Preview the counts and precision; write nothing")
        parser.add_argument("--revert", action="store_true", help="Take the rules off the automatic negatives")
        parser.add_argument("--campaign", help="Only this campaign (name or id) on the pool")
        parser.add_argument("--threshold", type=bounded_float(0, 1e9, above_low=True), default=1.5,
                            help="Cardinality threshold (default 1.5)")
        parser.add_argument("--type-source", choices=TYPE_SOURCES, default="dataset",
                            help="dataset: the KG's own types, no type rule without any (default); roles: the "
                                 "relation sides each entity is seen on in train, on any KG")
        parser.add_argument("--type-min-support", type=bounded_int(1, INT32_MAX), default=TypeOptions.min_support,
                            help="A type counts only when this many train entities have it (default %(default)s)")
        parser.add_argument("--type-max-overlap", type=bounded_float(0, 1), default=TypeOptions.max_overlap,
                            help="Share of a type's entities that may be on the relation's side while the type "
                                 "still counts as incompatible (default %(default)s: strictly disjoint)")
        parser.add_argument("--labels", help="Labelled triples (h r t Y|N) to measure the rules' precision on")

    def handle(self, *args, **options) -> None:
        try:
            pool = pool_by_ref(options["pool"])
            rules = parse_rules(options["rules"])
            campaigns = self._campaigns(pool, options["campaign"])
            type_options = TypeOptions(options["type_min_support"], options["type_max_overlap"], options["type_source"])
        except (Pool.DoesNotExist, Campaign.DoesNotExist, ValueError) as exc:
            raise CommandError(str(exc)) from None
        if options["revert"]:
            if options["dry_run"]:
                raise CommandError("--dry-run with --revert writes nothing; leave one out")
            for campaign in campaigns:
                result = revert_auto_labels(campaign, rules=rules)
                self.stdout.write(f"{campaign.name}: {result.sent_back} automatic negatives sent back to human "
                                  f"judging, {result.still_covered} kept N by another applied rule")
            return
        if options["dry_run"] or not campaigns:
            if not campaigns and not options["dry_run"]:
                raise CommandError(f"no campaign on pool {pool}; create one first (create_campaign) or use --dry-run")
            kg = pool.sample.kg
            try:
                reference = file_reference_labels(kg, options["labels"]) if options["labels"] else campaign_reference_labels(kg)
            except AnnotationError as exc:
                raise CommandError(str(exc)) from None
            report = filter_preview(pool, rules, threshold=options["threshold"], type_options=type_options,
                                    reference=reference)
            self._print(report, "would label")
            self._print_precision(report, reference)
            return
        for campaign in campaigns:
            report = apply_filter(campaign, rules, threshold=options["threshold"], type_options=type_options)
            self._print(report, f"{campaign.name}: labelled")
            self.stdout.write(f"{campaign.name}: {report.applied} items labelled N, {report.extended} automatic "
                              f"negatives given another rule, {report.kept} left to people (already in judging)")

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

    def _print_precision(self, report: FilterReport, reference: ReferenceLabels) -> None:
        if not reference.labels:
            self.stdout.write(f"precision: no labelled triples at hand ({reference.description}); "
                              "give --labels FILE or import a campaign's judgments")
            return
        self.stdout.write(f"precision against {reference.description}"
                          + (f", {reference.conflicting} conflicting triples left out" if reference.conflicting else ""))
        self.stdout.write("rule\twould reject\tlabelled\tnegatives\tpositives\tprecision")
        for rule, record in report.precision.items():
            precision = "-" if record.precision is None else f"{record.precision:.4f}"
            self.stdout.write(f"{rule}\t{record.rejected}\t{record.labelled}\t{record.negatives}\t"
                              f"{len(record.positives)}\t{precision}")
        positives = report.precision["any"].positives if "any" in report.precision else []
        if positives:
            self._print_positives(report, positives)

    def _print_positives(self, report: FilterReport, positives: list) -> None:
        shown = positives[:SHOWN_POSITIVES]
        rows = dict(
            (pk, (h, r, t)) for pk, h, r, t in PoolEntry.objects.filter(pk__in=[pk for pk, _t in shown])
            .values_list("pk", "head__key", "relation__key", "tail__key")
        )
        self.stdout.write(f"labelled positives the rules would reject ({len(positives)}):")
        for pk, _triple in shown:
            h, r, t = rows[pk]
            fired = ",".join(report.fired.get(pk, ()))
            self.stdout.write(f"  {h}\t{r}\t{t}\t[{fired}]")
        if len(positives) > len(shown):
            self.stdout.write(f"  ... and {len(positives) - len(shown)} more")
