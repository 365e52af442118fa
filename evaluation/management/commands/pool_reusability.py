"""python manage.py pool_reusability CAMPAIGN [--systems a,b] [--metrics micro_MRR,...]

Leave-one-system-out (and leave-one-family-out) on a campaign's final labels: how far each pooled system's metrics
and place move when the pool is rebuilt without it. Prints the summary and saves VAR_DIR/reusability/CAMPAIGN.json,
which the campaign's exported README quotes.
"""
from __future__ import annotations

from django.core.management.base import CommandError

from kgpool.commands import KgpoolCommand


class Command(KgpoolCommand):
    help = "Pool reusability of a campaign's judged set: leave each system (and architecture family) out."

    def add_arguments(self, parser):
        parser.add_argument("campaign")
        parser.add_argument("--systems", help="comma-separated systems (default: the pool's systems)")
        parser.add_argument("--metrics", help="comma-separated metric columns (default: micro/macro MRR, Hits@10, "
                                              "MAP@10, nDCG@10)")

    def handle(self, *args, **options):
        from evaluation.services.labels import CampaignLabels, LabelError, campaign_by_name
        from evaluation.services.ranks import EvaluationError
        from evaluation.services.reusability import HEADLINE, pool_reusability, save
        from pooling.selectors.pools import systems_by_names

        try:
            campaign = campaign_by_name(options["campaign"])
            pool = campaign.pool
            systems = (systems_by_names(pool.sample.kg, [s.strip() for s in options["systems"].split(",") if s.strip()])
                       if options["systems"] else None)
            metrics = tuple(m.strip() for m in options["metrics"].split(",")) if options["metrics"] else HEADLINE
            result = pool_reusability(pool.sample, CampaignLabels(campaign), pool, systems, metrics)
        except (LabelError, EvaluationError, KeyError, ValueError) as exc:
            raise CommandError(str(exc).strip("'\"")) from None
        path = save(result, campaign.name)
        for row in result["summary"]:
            self.stdout.write(f"{row['group']:<24} {row['metric']:<16} left out {row['items_left_out']:>6} items: "
                              f"drop {row['max_relative_drop']:.1%}, places lost {row['max_places_lost']}, "
                              f"tau {row['tau']:.3f}")
        self.stdout.write(f"saved {path}")
