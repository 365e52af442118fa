"""Helpers shared by the pooling tests (not collected: the name does not start with test_)."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings as django_settings

UMLS = Path(django_settings.BASE_DIR) / "datasets" / "umls"


@pytest.fixture
def storage(settings, tmp_path):
    """A fresh STORAGE_DIR per test."""
    settings.STORAGE_DIR = tmp_path / "storage"
    return settings.STORAGE_DIR


def import_umls(name: str = "umls"):
    from pooling.services.kg_import import import_kg

    return import_kg(name, UMLS)


def train_tiny(kg, architecture: str, name: str | None = None, *, epochs: int = 3, dim: int = 16, seed: int = 0):
    """A quickly trained system (a fraction of a second on UMLS)."""
    from pooling.services.systems import train_new_system

    return train_new_system(
        kg, architecture, name=name, epochs=epochs, dim=dim, seed=seed, eval_every=epochs, batch_size=512,
        lr=0.05, device="cpu", num_threads=1,
    )


def pool_state(pool):
    """(entries (h, r, t, depth) sorted, hits (h, r, t, system, qid, rank) sorted, entry ids) of a pool."""
    from pooling.models import PoolEntry
    from pooling.selectors.pools import pool_entry_array, pool_hits

    ids = sorted(PoolEntry.objects.filter(pool=pool).values_list("pk", flat=True))
    return pool_entry_array(pool).tolist(), pool_hits(pool), ids
