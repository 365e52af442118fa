"""kg_stats keeps a KG's statistics in files (issue 18): the second call reads them (memory-mapped) and gives the
same values as computing them from the triples."""
from __future__ import annotations

import numpy as np
import pytest

from tests._pool_support import import_umls, storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_cached_stats_equal_computed(storage):
    from pooling.selectors.kg import kg_triples
    from pooling.selectors.kg_stats import compute_kg_stats, kg_stats

    kg = import_umls()
    first = kg_stats(kg)
    assert list((storage / "kg-stats").rglob("*.npy"))
    again = kg_stats(kg)
    assert isinstance(again.role_keys, np.memmap)
    fresh = compute_kg_stats(kg_triples(kg), kg.num_entities, kg.num_relations)
    for name in ("role_keys", "role_counts", "train_role_keys", "train_role_counts", "degree", "relation_size",
                 "tph", "hpt"):
        assert np.array_equal(np.asarray(getattr(again, name)), getattr(fresh, name)), name
        assert np.array_equal(np.asarray(getattr(first, name)), getattr(fresh, name)), name
    assert again.num_entities == kg.num_entities
