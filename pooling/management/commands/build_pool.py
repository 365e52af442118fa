from __future__ import annotations

from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, device_name, positive_seconds
from pooling.management.commands._pooling_common import embedded, get_sample, wait_for_pool
from pooling.management.progress import StageProgress


class Command(KgpoolCommand):
    interrupted_message = ("interrupted: the ranking chunks already done are kept; run the command again to finish "
                           "the pool")

    help = (
        "Build the pool of depth K on a sample: the filtered top-K candidates of each chosen system for every "
        "question, known triples (train/valid/test) excluded, merged across systems (each entry keeps its best "
        "rank as depth and which systems retrieved it for which question). In the embedded mode (no "
        "CELERY_BROKER_URL) it runs here with a progress bar; with a broker the ranking chunks go to the GPU "
        "queue and a merge task finishes the pool (--wait shows a bar until it is done). Running it again for a "
        "finished pool changes nothing; for a failed one it redoes only the missing chunks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("sample", help="Sample name, KG/NAME when several KGs have one of that name, or its id")
        parser.add_argument("--systems", required=True, help="Comma-separated system names, e.g. transe,distmult,conve")
        parser.add_argument("--depth", type=bounded_int(1, INT32_MAX), default=10,
                            help="Pool depth k, at most the number of entities (default 10)")
        parser.add_argument("--name", help="Pool name: letters, digits, -, _ and + (default: depth<K>-<systems>)")
        parser.add_argument("--chunk-size", type=bounded_int(1, INT32_MAX),
                            help="Questions per ranking task (default 256)")
        parser.add_argument("--device", type=device_name,
                            help="Embedded mode: cpu, cuda or cuda:N (default: cuda when available)")
        parser.add_argument("--force", action="store_true", help="Merge again even if the pool is done (no-op if unchanged)")
        parser.add_argument("--wait", action="store_true", help="With a broker: wait for the workers, showing progress")
        parser.add_argument("--timeout", type=positive_seconds,
                            help="With --wait: give up waiting after this many seconds")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.models import Pool, System
        from pooling.selectors.pools import systems_by_names
        from pooling.services.pools import PoolError, build_pool_now, create_pool, start_pool_build

        sample = get_sample(options["sample"])
        names = [name.strip() for name in options["systems"].split(",") if name.strip()]
        try:
            systems = systems_by_names(sample.kg, names)
            pool = create_pool(sample, systems, options["depth"], name=options["name"], chunk_size=options["chunk_size"])
        except (System.DoesNotExist, PoolError) as exc:
            raise CommandError(str(exc)) from None
        with StageProgress(enabled=options["verbosity"] >= 1) as progress:
            if embedded():
                try:
                    pool = build_pool_now(pool, force=options["force"], device=options["device"], progress=progress)
                except Exception as exc:
                    raise CommandError(f"building pool {pool.name} failed: {type(exc).__name__}: {exc}; "
                                       "run the command again to finish it (done chunks are kept)") from None
            else:
                with transaction.atomic():
                    started = start_pool_build(pool, force=options["force"])
                if started:
                    self.stdout.write(f"Pool {pool.name} sent to the workers ({pool.pk}); follow it with "
                                      f"`pool_status {pool.pk}` or the admin.")
                if started and options["wait"]:
                    pool = wait_for_pool(pool, progress, options["timeout"])
                pool.refresh_from_db()
        if pool.status == Pool.Status.FAILED:
            raise CommandError(f"pool {pool.name} failed: {pool.error}")
        if pool.status == Pool.Status.DONE:
            self.stdout.write(f"Pool {sample.kg.name}/{sample.name}/{pool.name}: {pool.entries.count():,} entries "
                              f"from {len(systems)} systems at depth {pool.depth}")
