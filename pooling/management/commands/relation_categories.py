from __future__ import annotations

from collections import Counter

from django.core.management.base import CommandError, CommandParser

from kgpool.commands import KgpoolCommand, bounded_float
from pooling.models import KnowledgeGraph
from pooling.selectors.kg import kg_by_name, kg_relation_categories


class Command(KgpoolCommand):
    help = (
        "Print relation<TAB>category<TAB>tph<TAB>hpt for every relation of a knowledge graph: 1-1 / 1-N / N-1 / N-N "
        "from the TRAIN split, where tph (hpt) is the mean number of distinct tails per (relation, head) "
        "(heads per (relation, tail)) and a side is 'many' when its mean is >= the threshold. A summary goes to stderr."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Knowledge graph name (as given to import_kg)")
        parser.add_argument("--threshold", type=bounded_float(0, 1e9, above_low=True), default=1.5,
                            help="Mean at which a side counts as 'many' (default 1.5)")

    def handle(self, *args: object, **options: object) -> None:
        try:
            kg = kg_by_name(options["name"])
        except KnowledgeGraph.DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        rows = kg_relation_categories(kg, options["threshold"])
        for key, category, tph, hpt in rows:
            self.stdout.write(f"{key}\t{category}\t{tph:.4f}\t{hpt:.4f}")
        counts = Counter(category for _key, category, _tph, _hpt in rows)
        summary = ", ".join(f"{counts.get(c, 0)} {c}" for c in ("1-1", "1-N", "N-1", "N-N"))
        self.stderr.write(f"{kg.name}: {summary}")
