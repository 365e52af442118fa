"""python manage.py simulate_judging SAMPLE --labels FILE|--campaign NAME [--orders random,depth,...] [--seeds 10]
[--pool NAME] [--systems a,b] [--batch N] [--points 50] [--out DIR] [--no-figures]

Replays a finished campaign's final labels (or any judged set) as the oracle over the pool of its systems and
reports, per judging order: positives found and Kendall's tau-b of the system ranking (every metric of the
evaluation) against the full-pool ranking, vs judgments; and the judgments needed to reach 90% of the positives
and tau-b >= 0.9. Writes summary.csv, curves.csv, summary.json and PNG curves (seeds' spread as a band) to --out.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from kgpool.commands import KgpoolCommand, bounded_int


class Command(KgpoolCommand):
    help = "Compare judging orders by replaying a judged set as the oracle (positives found, ranking stability)."

    def add_arguments(self, parser):
        from annotation.lib.judging_order import ORDERS

        parser.add_argument("sample", help="sample name, KG/NAME or id")
        parser.add_argument("--labels", help="judgments file h<TAB>r<TAB>t<TAB>Y|N (the oracle)")
        parser.add_argument("--campaign", help="judging campaign whose final labels are the oracle")
        parser.add_argument("--orders", default="random,depth,move_to_front,maxmean",
                            help=f"comma-separated orders (of {', '.join(ORDERS)})")
        parser.add_argument("--seeds", type=bounded_int(1, 1000), default=10, help="seeds per order (0..N-1)")
        parser.add_argument("--pool", help="pool name (default: the campaign's, else the sample's only pool)")
        parser.add_argument("--systems", help="comma-separated systems to rank (default: the pool's systems)")
        parser.add_argument("--batch", type=bounded_int(1, 10**9), help="items per decision (default: about 200 decisions, as the live queue re-keys)")
        parser.add_argument("--points", type=bounded_int(1, 10000), default=50, help="checkpoints at which systems are scored")
        parser.add_argument("--out", help="output folder (default VAR_DIR/simulations/sample-<id>, shown on the "
                                          "campaigns' judging-order pages)")
        parser.add_argument("--no-figures", action="store_true")

    def handle(self, *args, **options):
        from evaluation.services.judging_simulation import (
            SimulationError, build_oracle, default_out, ratios, run_simulation, write_outputs,
        )
        from evaluation.services.labels import (
            CampaignLabels, JudgmentsFile, LabelError, campaign_by_name, check_campaign_sample, default_pool,
        )
        from evaluation.services.ranks import EvaluationError
        from pooling.models import Pool, Sample
        from pooling.selectors.pools import sample_by_ref, systems_by_names

        try:
            sample = sample_by_ref(options["sample"])
        except (Sample.DoesNotExist, Sample.MultipleObjectsReturned) as exc:
            raise CommandError(str(exc)) from None
        labels, campaign_name = options["labels"], options["campaign"]
        if bool(labels) == bool(campaign_name):
            raise CommandError("give the oracle: --labels FILE or --campaign NAME (one of them)")
        if labels and not Path(labels).is_file():
            raise CommandError(f"labels file {labels} does not exist")
        campaign = None
        if campaign_name:
            try:
                campaign = campaign_by_name(campaign_name)
                check_campaign_sample(campaign, sample)
            except LabelError as exc:
                raise CommandError(str(exc)) from None
        if options["pool"]:
            pool = Pool.objects.filter(sample=sample, name=options["pool"]).first()
            if pool is None:
                known = ", ".join(Pool.objects.filter(sample=sample).values_list("name", flat=True)) or "none"
                raise CommandError(f"no pool {options['pool']!r} on sample {sample.name} (known: {known})")
        else:
            pool = campaign.pool if campaign is not None else default_pool(sample)
            if pool is None:
                raise CommandError(f"sample {sample.name} has no single finished pool: name one with --pool")
        orders = [o.strip() for o in options["orders"].split(",") if o.strip()]
        if options["seeds"] < 1 or options["points"] < 1 or (options["batch"] is not None and options["batch"] < 1):
            raise CommandError("--seeds, --points and --batch must be at least 1")
        try:
            systems = None
            if options["systems"]:
                systems = systems_by_names(sample.kg, [n.strip() for n in options["systems"].split(",") if n.strip()])
            source = CampaignLabels(campaign) if campaign is not None else JudgmentsFile(Path(labels))
            oracle = build_oracle(sample, source, pool, systems, campaign=campaign)
            self.stdout.write(f"replay: {oracle.view.num_items} pool items people judge ({int(oracle.truth.sum())} "
                              f"positive); {oracle.rule_negatives} rule negatives known from the start; "
                              f"{oracle.uncovered} pool entries without an oracle label left out")
            result = run_simulation(oracle, orders, list(range(options["seeds"])), batch=options["batch"],
                                    points=options["points"], log=self.stdout.write)
        except (SimulationError, EvaluationError, LabelError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        out = Path(options["out"]) if options["out"] else default_out(sample)
        write_outputs(result, out, figures=not options["no_figures"])
        self.stdout.write(format_summary(result, ratios(result)))
        self.stdout.write(f"files in {out}")


def format_summary(result, ratio: dict) -> str:
    lines = [f"{'order':<18} {'90% positives':>14} {'tau>=0.9 micro MRR':>19} {'tau>=0.9 macro MRR':>19}"]
    for row in result.summary:
        def cell(value):
            return "never" if value is None else f"{value:.0f} ({value / result.items:.0%})"
        lines.append(f"{row['order']:<18} {cell(row['judgments_90_positives']):>14} "
                     f"{cell(row.get('judgments_tau90_micro_MRR')):>19} {cell(row.get('judgments_tau90_macro_MRR')):>19}")
    if "ratio_to_cheaper_baseline" in ratio:
        lines.append(f"best adaptive order {ratio['best_adaptive']}: {ratio['ratio_to_cheaper_baseline']:.2f} x the "
                     f"judgments of the cheaper of random and depth for 90% of the positives")
    return "\n".join(lines)
