"""A trained system's final valid / test MRR (issue 18): computed with a capped ranking batch, over the whole split
for a KG the 1-N trainer takes, over a seeded sample where negative sampling is chosen (a Wikidata-sized test
split against millions of entities is hours of CPU). Checked against the unrestricted filtered MRR."""
from __future__ import annotations

import numpy as np
import pytest

from pooling.kge import negative_sampling
from pooling.kge.evaluation import filtered_mrr
from pooling.kge.negative_sampling import held_out_mrr
from pooling.kge.training import TrainingConfig
from pooling.selectors.kg import kg_triples
from pooling.services.systems import load_system_model, train_new_system
from tests._pool_support import import_umls, storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def known(arrays) -> np.ndarray:
    return np.concatenate([arrays["train"], arrays["valid"], arrays["test"]])


def test_the_whole_test_split_for_a_1n_kg(storage):  # noqa: F811
    kg = import_umls()
    system = train_new_system(kg, "distmult", name="one-n", epochs=2, dim=8, eval_every=2, batch_size=512,
                              lr=0.05, device="cpu", num_threads=1, strategy="auto")
    arrays = kg_triples(kg)
    model = load_system_model(system, device="cpu")
    assert system.config["test_triples_ranked"] == len(arrays["test"])
    assert system.test_mrr == pytest.approx(filtered_mrr(model, arrays["test"], known(arrays)), abs=1e-12)


def test_a_seeded_sample_where_negative_sampling_is_chosen(storage):  # noqa: F811
    kg = import_umls()
    system = train_new_system(kg, "distmult", name="sampled", epochs=2, dim=8, eval_every=2, batch_size=512,
                              lr=0.05, device="cpu", num_threads=1, strategy="negative-sampling", valid_sample=150)
    arrays = kg_triples(kg)
    model = load_system_model(system, device="cpu")
    sample = negative_sampling.validation_sample(arrays["test"], 150, seed=system.config.get("seed", 0))
    assert system.config["test_triples_ranked"] == 150 < len(arrays["test"])
    assert system.test_mrr == pytest.approx(filtered_mrr(model, sample, known(arrays)), abs=1e-12)


def test_the_ranking_batch_is_capped_and_ranks_the_same(monkeypatch, storage):  # noqa: F811
    kg = import_umls()
    arrays = kg_triples(kg)
    system = train_new_system(kg, "complex", name="capped", epochs=1, dim=8, eval_every=1, batch_size=512,
                              lr=0.05, device="cpu", num_threads=1)
    model = load_system_model(system, device="cpu")
    config = TrainingConfig(architecture="complex", eval_batch_size=1024)
    batches: list[int] = []
    real = negative_sampling.filtered_mrr

    def recording(*args, batch_size: int, **kwargs) -> float:
        batches.append(batch_size)
        return real(*args, batch_size=batch_size, **kwargs)

    monkeypatch.setattr(negative_sampling, "filtered_mrr", recording)
    monkeypatch.setattr(negative_sampling, "EVAL_SCORES", 10 * kg.num_entities)  # room for 10 questions per batch
    mrr, ranked = held_out_mrr(model, arrays["test"], known(arrays), kg.num_relations, config, sample=False)
    assert batches == [10] and ranked == len(arrays["test"])
    assert mrr == pytest.approx(real(model, arrays["test"], known(arrays)), abs=1e-12)
