"""Vertical slice: train tiny systems on UMLS, draw a sample, build a depth-k pool in-process."""
from __future__ import annotations

import numpy as np
import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def test_build_pool_in_process(storage):
    from pooling.models import Pool, PoolEntry, Ranking
    from pooling.selectors.kg import kg_triples
    from pooling.selectors.pools import pool_entry_array, pool_entry_systems, sample_questions
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
    assert all(s.status == "ready" and s.checkpoint_file and s.valid_mrr > 0 and s.test_mrr > 0 for s in systems)
    sample = draw_sample(kg, size=40, seed=1)
    sq = sample_questions(sample)
    pool = create_pool(sample, systems, depth=5, chunk_size=16)
    seen = []
    pool = build_pool_now(pool, progress=lambda stage, done, total: seen.append((done, total)))
    assert pool.status == Pool.Status.DONE and pool.progress_done == pool.progress_total == 2 * 5
    assert seen[-1] == (10, 10)

    entries = pool_entry_array(pool)
    assert len(entries) == pool.entries.count() > 0
    # known triples are never pooled
    arrays = kg_triples(kg)
    known = {tuple(t) for split in arrays.values() for t in split.tolist()}
    assert not any((h, r, t) in known for h, r, t, _d in entries.tolist())
    # at most depth candidates per question and system; every depth in 1..k
    assert entries[:, 3].min() >= 1 and entries[:, 3].max() <= 5
    # depth = best rank over systems and questions, recomputed from the stored rankings
    from pooling.selectors.pools import ranking_result

    best: dict[tuple[int, int, int], int] = {}
    for ranking in Ranking.objects.filter(sample=sample):
        result = ranking_result(ranking)
        for row in range(len(sq)):
            anchor, relation, side = sq.questions.anchor[row], sq.questions.relation[row], sq.questions.side[row]
            for j, entity in enumerate(result.topk_entities[row, :5].tolist()):
                if entity < 0:
                    continue
                triple = (entity, int(relation), int(anchor)) if side == 0 else (int(anchor), int(relation), entity)
                best[triple] = min(best.get(triple, 99), j + 1)
    assert {tuple(row[:3]): row[3] for row in entries.tolist()} == best
    # provenance: systems that retrieved an entry
    entry = PoolEntry.objects.filter(pool=pool).order_by("-num_systems").first()
    assert len(pool_entry_systems(entry)) == entry.num_systems >= 1
    assert Ranking.objects.filter(sample=sample).count() == 2
    assert np.isfinite(Ranking.objects.first().mrr)
