from __future__ import annotations

from collections import Counter

from django.core.management.base import CommandError, CommandParser

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int
from pooling.management.commands._pooling_common import wait_for_pool
from pooling.management.progress import StageProgress


class Command(KgpoolCommand):
    help = "Show pools (all, or one by id) with status, progress (ranking chunks done / total) and entries per depth."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pool", nargs="?", type=bounded_int(1, INT32_MAX),
                            help="Pool id (default: list every pool)")
        parser.add_argument("--wait", action="store_true", help="Follow the pool with a progress bar until it is done")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.models import Pool

        pools = Pool.objects.select_related("sample__kg").order_by("pk")
        if options["pool"] is not None:
            pools = pools.filter(pk=options["pool"])
            if not pools.exists():
                raise CommandError(f"no pool with id {options['pool']}")
            if options["wait"]:
                with StageProgress(enabled=options["verbosity"] >= 1) as progress:
                    wait_for_pool(pools.get(), progress)
        for pool in pools:
            depths = Counter(pool.entries.values_list("depth", flat=True))
            per_depth = ", ".join(f"d{d}: {n}" for d, n in sorted(depths.items(), key=lambda i: (i[0] is None, i[0] or 0)))
            systems = ",".join(pool.systems.order_by("name").values_list("name", flat=True))
            self.stdout.write(
                f"{pool.pk:>4}  {pool.sample.kg.name}/{pool.sample.name}/{pool.name}  {pool.status}  "
                f"chunks {pool.progress_done}/{pool.progress_total}  {sum(depths.values()):,} entries  systems {systems}"
                + (f"\n      {per_depth}" if per_depth else "") + (f"\n      error: {pool.error}" if pool.error else "")
            )
