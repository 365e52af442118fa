from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from kgpool.commands import INT32_MAX, KgpoolCommand, bounded_int, refused
from pooling.management.commands._pooling_common import get_kg


class Command(KgpoolCommand):
    help = (
        "Import a pool built elsewhere. POOL.tsv has one candidate per line: `h r t [depth] [systems]` (entity and "
        "relation keys; depth an integer from 1 to the number of entities, or '-'; systems comma-separated names; tab or space separated). "
        "--sample lists the sampled test triples (0-based test indices or `h r t` lines). Each entry must answer "
        "a sampled question ((h, r, ?) or (?, r, t)); known triples are skipped. Systems named in the file are "
        "created as imported systems. All or nothing: any bad line is reported with its number and nothing is written."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kg", help="Name of the knowledge graph")
        parser.add_argument("pool_file", type=Path, help="The pool: `h r t [depth] [systems]` per line")
        parser.add_argument("--sample", type=Path, required=True, help="The sample: test indices or test triples")
        parser.add_argument("--name", help="Pool name: letters, digits, -, _ and + (default: the pool file's name)")
        parser.add_argument("--sample-name", help="Sample name: letters, digits, - and _ (default: the sample file's "
                                                  "name); reused if identical")
        parser.add_argument("--depth", type=bounded_int(1, INT32_MAX),
                            help="Pool depth, at most the number of entities (default: the largest depth in the file)")

    def handle(self, *args: object, **options: object) -> None:
        from pooling.services.pools import PoolError, import_pool

        kg = get_kg(options["kg"])
        try:
            pool, counts = import_pool(kg, options["pool_file"], options["sample"], name=options["name"],
                                       sample_name=options["sample_name"], depth=options["depth"])
        except PoolError as exc:
            raise refused(exc) from None
        self.stdout.write(
            f"Imported pool {kg.name}/{pool.sample.name}/{pool.name}: {counts['entries']:,} entries, "
            f"{counts['skipped_known']:,} known triples skipped, depth {pool.depth}"
        )
