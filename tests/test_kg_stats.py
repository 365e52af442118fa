"""The KG statistics kept per KG (pooling.selectors.kg_stats, issue 18) equal what the pages computed from the
triples on every request: relation categories, known answers per question, candidate features."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.cal_order import candidate_features, features_from_counts
from pooling.engine.categories import distinct_rows, relation_categories
from pooling.engine.questions import Questions, known_answers
from pooling.selectors.kg_stats import compute_kg_stats


def random_kg(seed: int, entities: int = 40, relations: int = 5, triples: int = 400) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = np.unique(np.stack([rng.integers(0, entities, triples), rng.integers(0, relations, triples),
                               rng.integers(0, entities, triples)], axis=1), axis=0)
    rng.shuffle(rows)
    return {"train": rows[: len(rows) * 8 // 10], "valid": rows[len(rows) * 8 // 10: len(rows) * 9 // 10],
            "test": rows[len(rows) * 9 // 10:]}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stats_match_the_per_request_computations(seed):
    arrays = random_kg(seed)
    stats = compute_kg_stats(arrays, 40, 5)
    assert stats.categories().tolist() == relation_categories(arrays["train"], 5)[0].tolist()

    rng = np.random.default_rng(seed + 10)
    questions = Questions(rng.integers(0, 40, 60), rng.integers(0, 5, 60), rng.integers(0, 2, 60))
    expected = known_answers(questions, arrays["train"], arrays["valid"], arrays["test"]).lengths
    assert stats.known_answer_counts(questions).tolist() == expected.tolist()

    candidates, relations, sides = rng.integers(0, 40, 50), rng.integers(0, 5, 50), rng.integers(0, 2, 50)
    features = features_from_counts(stats.degree[candidates], stats.train_role_count(relations, sides, candidates),
                                    stats.relation_size[relations])
    assert np.allclose(features, candidate_features(candidates, relations, sides, arrays["train"], 40))


def test_distinct_rows_brute_force():
    rng = np.random.default_rng(3)
    for columns in ([rng.integers(0, 4, 300), rng.integers(0, 5, 300), rng.integers(0, 3, 300)],
                    [rng.integers(0, 3, 50) * 2**40, rng.integers(0, 3, 50) * 2**40],  # too wide for one int64 key
                    [np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)]):
        expected = sorted(set(zip(*(c.tolist() for c in columns))))
        assert list(zip(*(c.tolist() for c in distinct_rows(*columns)))) == expected
