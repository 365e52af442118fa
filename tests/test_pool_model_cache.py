"""A pool build loads each system's model and the KG's known triples once per process, not once per chunk (issue 18:
a Wikidata-sized entity table takes seconds to load), and again when the file changes; entity blocks build the same
pool."""
from __future__ import annotations

import os

import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted_loads(monkeypatch):
    from pooling.services import systems

    monkeypatch.setattr(systems, "_MODEL_CACHE", {})
    loads = []
    original = systems.load_system_model

    def counting(system, device=None):
        loads.append(system.name)
        return original(system, device)

    monkeypatch.setattr(systems, "load_system_model", counting)
    return loads


@pytest.fixture
def counted_triples(monkeypatch):
    from pooling.selectors import pools

    monkeypatch.setattr(pools, "_KNOWN_CACHE", {})
    reads = []
    original = pools.known_triples
    monkeypatch.setattr(pools, "known_triples", lambda kg: reads.append(kg.name) or original(kg))
    return reads


def test_model_loaded_once_per_process_and_blocks_build_the_same_pool(storage, counted_loads, counted_triples,
                                                                        settings, monkeypatch):
    from pooling.engine import ranking
    from pooling.models import Ranking
    from pooling.services.pools import build_pool_now, create_pool, rank_pool_chunk
    from pooling.services.samples import draw_sample
    from pooling.storage import storage_path

    kg = import_umls()
    systems = [train_tiny(kg, "distmult", "a", epochs=1)]
    sample = draw_sample(kg, size=40, seed=1)
    pool = build_pool_now(create_pool(sample, systems, depth=5, chunk_size=16, name="whole"))
    assert pool.progress_total == 5  # five chunks
    assert counted_loads == ["a"]
    assert counted_triples == ["umls"]  # five chunks and the merge filtered with one read

    Ranking.objects.filter(sample=sample).delete()  # the merge stored the rankings: rank again
    # a (16 questions x 135 entities) float32 batch does not fit in 4 KiB: blocks of 45 entities
    settings.KGPOOL_RANK_MEMORY_BYTES = 4096
    monkeypatch.setattr(ranking, "MIN_AUTO_BLOCK", 16)
    calls = []
    original = ranking._rank_blocked
    monkeypatch.setattr(ranking, "_rank_blocked", lambda *a, **kw: calls.append(a[3]) or original(*a, **kw))
    blocked = build_pool_now(create_pool(sample, systems, depth=5, chunk_size=16, name="blocked"))
    assert calls and max(calls) < kg.num_entities
    assert pool_state(blocked)[:2] == pool_state(pool)[:2]
    assert counted_loads == ["a"]  # still cached

    checkpoint = storage_path(systems[0].checkpoint_file)
    stat = checkpoint.stat()
    os.utime(checkpoint, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # retrained: a new file
    Ranking.objects.filter(sample=sample).delete()
    again = create_pool(sample, systems, depth=5, chunk_size=16, name="again")
    rank_pool_chunk(again, systems[0], 0)
    rank_pool_chunk(again, systems[0], 1)
    assert counted_loads == ["a", "a"]
