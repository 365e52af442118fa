"""Judging orders on real data (issue 20): the FB15k-237 case-study pool replayed with the published judgments as
the oracle. Prints, in one run, the judgments each order needs for 90% of the positives and for a stable system
ranking (tau-b >= 0.9 against the full-pool ranking, micro and macro MRR), and the issue's target ratios.

    # once (about half an hour on this 2-core CPU): the six quick-profile systems and their depth-10 pool
    KGPOOL_VAR_DIR=var/case-study nice -n 19 .venv/bin/python manage.py case_study fb15k237 --profile quick \
        --no-analyses --no-figures
    # then (minutes): the replay
    KGPOOL_VAR_DIR=var/case-study nice -n 19 .venv/bin/python bench/judging_orders.py [--seeds 10] [--out DIR]

The oracle covers the pool entries the published campaign judged; entries the trivial filters label N are known
from the start (they never reach people), the rest are what people would judge.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "fb15k-237-pooled" / "judgments.tsv"
TARGET_POSITIVES_RATIO = 0.5
TARGET_TAU_SHARE = 0.4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--orders", default="random,depth,move_to_front,maxmean,maxmean_question,kg_aware,cal,cal_top")
    parser.add_argument("--labels", default=str(DATA), help="oracle labels (default: the published judgments)")
    parser.add_argument("--points", type=int, default=50)
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "judging-orders"))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)  # the study's database may predate this code
    from annotation.models import Campaign
    from evaluation.management.commands.simulate_judging import format_summary
    from evaluation.services.judging_simulation import build_oracle, ratios, run_simulation, write_outputs
    from evaluation.services.labels import JudgmentsFile

    campaign = Campaign.objects.filter(name__startswith="case-study-pool").select_related("pool__sample").last()
    if campaign is None:
        print("no case-study campaign in this KGPOOL_VAR_DIR: run `manage.py case_study fb15k237 --profile quick` first",
              file=sys.stderr)
        return 2
    pool = campaign.pool
    started = time.perf_counter()
    oracle = build_oracle(pool.sample, JudgmentsFile(Path(args.labels)), pool, None)
    print(f"pool {pool.name}: {oracle.index.entry_pks.size} entries, systems {', '.join(oracle.index.system_names)}; "
          f"replay: {oracle.view.num_items} entries people judge ({int(oracle.truth.sum())} Y), "
          f"{oracle.rule_negatives} filtered N known from the start, {oracle.uncovered} entries the oracle does not "
          f"label left out ({time.perf_counter() - started:.0f} s to load)")
    positives = int(oracle.truth.sum())
    need = math.ceil(0.9 * positives)
    print(f"oracle lower bound: every positive first, 90% of them after {need} judgments "
          f"({need / max(oracle.view.num_items, 1):.0%} of {oracle.view.num_items})")
    from annotation.lib.cal_order import hindsight_scores

    ranked = oracle.truth[np.argsort(-hindsight_scores(oracle.view, oracle.truth), kind="stable")]
    ceiling = int(np.searchsorted(np.cumsum(ranked), need)) + 1
    print(f"hindsight ceiling of CAL's features (a model fitted on every label, yields leave-one-out): 90% of the "
          f"positives after {ceiling} judgments ({ceiling / max(oracle.view.num_items, 1):.0%})")
    orders = [o for o in args.orders.split(",") if o]
    result = run_simulation(oracle, orders, list(range(args.seeds)), points=args.points, log=print)
    write_outputs(result, Path(args.out))
    ratio = ratios(result)
    print(format_summary(result, ratio))
    best = ratio.get("best_adaptive")
    if best:
        share_micro, share_macro = ratio["tau90_micro_MRR_share"], ratio["tau90_macro_MRR_share"]
        print(f"target 1: {best} needs {ratio['ratio_to_cheaper_baseline']:.2f} x the judgments of the cheaper of "
              f"random/depth for 90% of the positives (target <= {TARGET_POSITIVES_RATIO}): "
              f"{'met' if ratio['ratio_to_cheaper_baseline'] <= TARGET_POSITIVES_RATIO else 'NOT met'}")
        for metric, share in (("micro MRR", share_micro), ("macro MRR", share_macro)):
            shown = "never" if share is None else f"{share:.0%}"
            met = share is not None and share <= TARGET_TAU_SHARE
            print(f"target 2: {best} keeps tau-b >= 0.9 ({metric}) from {shown} of the judgments "
                  f"(target <= {TARGET_TAU_SHARE:.0%}): {'met' if met else 'NOT met'}")
    print(f"files in {args.out}; {result.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
