from __future__ import annotations


from django.core.management.base import CommandError, CommandParser

from annotation.models import Campaign, Item
from annotation.selectors.agreement import is_defined
from annotation.selectors.campaigns import campaign_by_ref
from annotation.selectors.gold import gold_accuracy_by_annotator, gold_summary
from annotation.selectors.quality import CI_GROUPINGS, agreement_with_ci, rushed_report
from annotation.services.reuse import reused_count
from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_float, bounded_int


def _pct(x: float) -> str:
    return "  n/a" if not is_defined(x) else f"{100 * x:5.1f}"


def _num(x: float) -> str:
    return "   n/a" if not is_defined(x) else f"{x:6.3f}"


def _ci(interval, fmt=_num) -> str:
    return f"{fmt(interval.estimate)} [{fmt(interval.low).strip()}, {fmt(interval.high).strip()}]"


class Command(KgpoolCommand):
    help = (
        "Judging quality of a campaign (issue 8): gold-check accuracy per annotator (Wilson 95% CI), rushed "
        "judgments and annotators, consistency flags, reused labels, and agreement (percent, kappa, AC1, alpha) "
        "with bootstrap 95% CIs, overall or --by relation/category/depth/system/domain."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or id")
        parser.add_argument("--by", choices=CI_GROUPINGS, action="append", help="Agreement breakdown(s) (default overall)")
        parser.add_argument("--samples", type=bounded_int(1, 100_000), default=1000, help="Bootstrap resamples")
        parser.add_argument("--seed", type=bounded_int(0, INT32_MAX), default=0)
        parser.add_argument("--threshold", type=bounded_float(0, 1),
                            help="Gold accuracy warning threshold (default: the campaign's)")

    def handle(self, *args, **options) -> None:
        try:
            campaign = campaign_by_ref(options["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        w = self.stdout.write
        threshold = campaign.gold_threshold if options["threshold"] is None else options["threshold"]
        summary = gold_summary(campaign)
        w(f"campaign {campaign.name}: gold rate {campaign.gold_rate:.3f}, {summary.items} gold checks "
          f"({summary.yes} Y, {summary.no} N), {summary.judgments} gold answers")
        w(f"gold accuracy per annotator (warning under {threshold:.2f}):")
        rows = gold_accuracy_by_annotator(campaign)
        if not rows:
            w("  (no gold answers yet)")
        for row in rows:
            warn = "  WARNING" if row.below(threshold) else ""
            w(f"  {row.username}: {row.correct}/{row.total} = {_ci(row.accuracy, _pct)}%{warn}")
        rushed = rushed_report(campaign)
        if rushed.median_ms is None:
            w("rushed: no timed judgments")
        else:
            w(f"rushed: campaign median {rushed.median_ms / 1000:.1f}s, limit {rushed.limit_ms / 1000:.1f}s "
              f"(factor {rushed.factor}); {len(rushed.judgments)} judgment(s) under it")
            for pace in rushed.annotators:
                mark = "  FLAGGED" if pace.flagged else ""
                w(f"  {pace.username}: median {pace.median_ms / 1000:.1f}s ({pace.ratio:.2f} x), "
                  f"{pace.rushed}/{pace.judgments} rushed{mark}")
        flagged = Item.objects.filter(campaign=campaign, is_gold=False).exclude(flags=[])
        kinds: dict[str, int] = {}
        for flags in flagged.values_list("flags", flat=True):
            for flag in flags:
                kinds[flag.split(":", 1)[0]] = kinds.get(flag.split(":", 1)[0], 0) + 1
        w(f"consistency flags: {flagged.count()} item(s) flagged"
          + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")" if kinds else ""))
        w(f"reused labels: {reused_count(campaign)}")
        for by in options["by"] or ["overall"]:
            w(f"agreement by {by} (95% bootstrap CI, {options['samples']} resamples; rule, imported, reused and gold "
              "labels left out):")
            rows = agreement_with_ci(campaign, by, samples=options["samples"], seed=options["seed"])
            if not rows:
                w("  (no doubly judged items yet)")
            for row in rows:
                unsure = (f" ({row.cant_tell} with a can't tell: a disagreement in percent, left out of kappa and AC1)"
                          if row.cant_tell else "")
                w(f"  {row.group}: n={row.items} percent {_ci(row.percent, _pct)} kappa {_ci(row.kappa)} "
                  f"AC1 {_ci(row.ac1)} alpha {_ci(row.alpha)}{unsure}")
