"""The seed-42 sample of FB15k-237 drawn through the Django service is the published one (SPEC 3)."""
from __future__ import annotations

import numpy as np
import pytest

from tests._pool_support import storage  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_seed_42_sample_is_the_published_sample(storage, shared_data):
    from pooling.selectors.pools import sample_questions, sample_test_indices, sample_triples
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import draw_sample, sample_from_file

    kg = import_kg("fb15k-237", shared_data / "fb15k-237")
    sample = draw_sample(kg, size=1023, seed=42)
    published = np.loadtxt(shared_data / "fb15k-237-pooled" / "sample_idxs.txt", dtype=np.int64)
    assert np.array_equal(sample_test_indices(sample), published)
    assert sample.name == "uniform-1023-seed42" and sample.size == 1023
    # test indices are line numbers of test.txt: the sampled triples are the published triples
    from pooling.selectors.kg import kg_relation_keys, kg_triples
    from pooling.selectors.pools import entity_keys

    keys, relation_keys = entity_keys(kg), kg_relation_keys(kg)
    first_line = tuple((shared_data / "fb15k-237" / "test.txt").open().readline().rstrip("\n").split("\t"))
    h, r, t = kg_triples(kg)["test"][0].tolist()
    assert (keys[h], relation_keys[r], keys[t]) == first_line  # test index = line of test.txt
    drawn = [(keys[h], relation_keys[r], keys[t]) for h, r, t in sample_triples(sample).tolist()]
    published_triples = [tuple(line.split("\t")) for line in
                         (shared_data / "fb15k-237-pooled" / "sample.txt").read_text().splitlines()]
    assert drawn == published_triples, "the KG's test array is not in test.txt order (see pooling.engine.kgfiles)"
    assert sample.kl_divergence == pytest.approx(0.1031, abs=1e-4)  # see engine.sampling for SPEC's 0.0889
    # the published triples file gives the same sample
    from_file = sample_from_file(kg, shared_data / "fb15k-237-pooled" / "sample.txt", name="published")
    assert np.array_equal(sample_triples(from_file), sample_triples(sample))
    sq = sample_questions(sample)
    heads = sum(qid.startswith("head") for qid in sq.qids)
    assert len(sq) == sample.questions.count() and sq.qids[0] == "head0" and sq.qids[heads] == "tail0"
    # identical questions are aggregated: fewer questions than 2 x triples, every triple asks two
    assert len(sq) < 2 * 1023 and sq.answers.nnz == 2 * 1023
    first = sample.triples.order_by("position").first()
    assert sorted(first.questions.values_list("qid", flat=True)) == ["head0", "tail0"]
