"""Reads of the pooling app."""
from __future__ import annotations

import numpy as np

from pooling.models import KnowledgeGraph
from pooling.storage import load_arrays


def kg_triples(kg: KnowledgeGraph) -> dict[str, np.ndarray]:
    """split -> int64 (n, 3) index arrays (head, relation, tail) of the KG."""
    return load_arrays(kg.arrays_file)


def kg_relation_keys(kg: KnowledgeGraph) -> list[str]:
    return list(kg.relations.order_by("index").values_list("key", flat=True))


def kg_by_name(name: str) -> KnowledgeGraph:
    """The KG of that name; raises KnowledgeGraph.DoesNotExist with the known names in the message."""
    try:
        return KnowledgeGraph.objects.get(name=name)
    except KnowledgeGraph.DoesNotExist:
        known = ", ".join(KnowledgeGraph.objects.values_list("name", flat=True)) or "none imported yet"
        raise KnowledgeGraph.DoesNotExist(f"no knowledge graph named {name!r} (known: {known})") from None


def kg_relation_categories(kg: KnowledgeGraph, threshold: float = 1.5) -> list[tuple[str, str, float, float]]:
    """(relation key, category, tph, hpt) for every relation, from the TRAIN split (SPEC 4.1)."""
    from pooling.engine.categories import relation_categories

    categories, tph, hpt = relation_categories(kg_triples(kg)["train"], kg.num_relations, threshold)
    return [(key, str(categories[i]), float(tph[i]), float(hpt[i])) for i, key in enumerate(kg_relation_keys(kg))]
