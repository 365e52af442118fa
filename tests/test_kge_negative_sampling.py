"""Negative-sampling training: its loss, learning UMLS near the 1-N path, seeds, no (batch, entities) tensor."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import torch  # noqa: E402
from tests._torch_support import single_thread  # noqa: F401 - autouse: one torch thread
from pooling.engine.kgfiles import read_kg  # noqa: E402
from pooling.kge import negative_sampling  # noqa: E402
from pooling.kge.evaluation import filtered_mrr  # noqa: E402
from pooling.kge.models import ARCHITECTURES, KGCModel, build_model  # noqa: E402
from pooling.kge.negative_sampling import SampledSoftmaxLoss, train_negative_sampling  # noqa: E402
from pooling.kge.training import TrainingConfig, train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
UMLS = ROOT / "datasets" / "umls"  # bundled with the repository (the quickstart's dataset)
SMALL = {
    "transe": {"dim": 8}, "rotate": {"dim": 8}, "distmult": {"dim": 8}, "complex": {"dim": 8}, "rescal": {"dim": 6},
    "conve": {"dim": 16, "embedding_height": 4, "channels": 4}, "tucker": {"entity_dim": 8, "relation_dim": 5},
}


def random_triples(num_entities: int, num_relations: int, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(num_entities, size=count), rng.integers(num_relations, size=count),
                     rng.integers(num_entities, size=count)], axis=1)


def test_loss_is_the_softmax_cross_entropy_of_the_positive_against_the_shared_negatives() -> None:
    torch.manual_seed(0)
    model = build_model("transe", 9, 2, dim=5, dropout=0.0)
    anchor, relation, answer = torch.tensor([0, 3, 8]), torch.tensor([1, 2, 0]), torch.tensor([4, 3, 1])
    negatives = torch.tensor([2, 3, 7])  # 3 is question 1's own answer: masked out there
    loss, objective = SampledSoftmaxLoss(model)(anchor, relation, answer, negatives)
    # Brute force from the (B, E) score matrix, one question at a time.
    scores = model.score_tails(anchor, relation).detach().double()
    expected = []
    for row in range(3):
        candidates = [int(answer[row])] + [int(n) for n in negatives if n != answer[row]]
        logits = scores[row, candidates]
        expected.append(-(logits[0] - torch.logsumexp(logits, 0)))
    assert loss.item() == pytest.approx(float(torch.stack(expected).mean()), rel=1e-5)
    assert objective.item() == loss.item()  # TransE has no penalty


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_every_architecture_trains_without_scoring_all_entities(name: str, monkeypatch) -> None:
    def refuse(self: KGCModel, anchor: torch.Tensor, relation: torch.Tensor) -> torch.Tensor:
        raise AssertionError("negative sampling built a (batch, entities) score matrix")

    monkeypatch.setattr(KGCModel, "score_tails", refuse)
    triples = random_triples(50, 3, 200)
    config = TrainingConfig(architecture=name, hyperparameters=SMALL[name], epochs=2, batch_size=32, lr=0.01,
                            negatives=8, device="cpu", strategy="negative-sampling")
    result = train(config, triples, None, 50, 3, progress=False)
    torch.manual_seed(0)  # the trainer's initial weights (config.seed 0)
    before = build_model(name, 50, 3, **SMALL[name])
    assert result.epochs_run == 2 and np.isfinite(result.history[-1]["loss"])
    assert not torch.equal(result.model.entity.weight, before.entity.weight)
    assert not any(module.sparse for module in result.model.modules() if isinstance(module, torch.nn.Embedding))


def test_memory_does_not_grow_with_entities_times_batch(tmp_path) -> None:
    # 1M entities: one (2 x 512 questions, entities) float matrix would take 4 GiB; the table and SparseAdam's
    # two moments at dim 4 take 1M x 4 x 4 bytes x 3 = 48 MiB.
    script = textwrap.dedent("""
        import resource, numpy as np, torch
        from pooling.kge.negative_sampling import train_negative_sampling
        from pooling.kge.fitting import TrainingConfig
        torch.set_num_threads(1)
        entities = 1_000_000
        rng = np.random.default_rng(0)
        triples = np.stack([rng.integers(entities, size=4096), rng.integers(5, size=4096),
                            rng.integers(entities, size=4096)], axis=1)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        config = TrainingConfig(architecture="distmult", hyperparameters={"dim": 4}, epochs=1, batch_size=512,
                                device="cpu", strategy="negative-sampling")
        train_negative_sampling(config, triples, triples[:8], entities, 5, progress=False)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    growth_mib = int(done.stdout.split()[-1])
    assert growth_mib < 300, growth_mib  # the validation ranking's batch is capped at 64 MiB of scores


def umls() -> tuple[dict[str, np.ndarray], int, int]:
    kg = read_kg(UMLS)
    return kg.splits, len(kg.entity_keys), len(kg.relation_keys)


def test_learns_umls_near_the_one_to_n_path() -> None:
    splits, entities, relations = umls()
    known = np.concatenate([splits["train"], splits["valid"], splits["test"]])
    common = dict(architecture="distmult", hyperparameters={"dim": 32, "dropout": 0.0}, epochs=15, lr=0.02,
                  eval_every=5, patience=0, device="cpu", seed=1)
    sampled = train(TrainingConfig(**common, strategy="negative-sampling", negatives=64), splits["train"],
                    splits["valid"], entities, relations, known_triples=splits["test"], progress=False)
    one_to_n = train(TrainingConfig(**common, strategy="1-n"), splits["train"], splits["valid"], entities,
                     relations, known_triples=splits["test"], progress=False)
    sampled_mrr = filtered_mrr(sampled.model, splits["test"], known)
    one_to_n_mrr = filtered_mrr(one_to_n.model, splits["test"], known)
    random_mrr = filtered_mrr(build_model("distmult", entities, relations, dim=32), splits["test"], known)
    assert random_mrr < 0.15
    assert sampled_mrr > 0.6 and sampled_mrr > one_to_n_mrr - 0.1, (sampled_mrr, one_to_n_mrr)
    # early stopping watched the validation MRR of the sample (all of UMLS's 652 validation triples here)
    assert sampled.best_valid_mrr == pytest.approx(filtered_mrr(sampled.model, splits["valid"], known))


def test_same_seed_same_weights_other_seed_other_weights() -> None:
    triples = random_triples(40, 4, 300)

    def weights(seed: int) -> torch.Tensor:
        config = TrainingConfig(architecture="complex", hyperparameters={"dim": 6}, epochs=3, batch_size=50,
                                negatives=16, seed=seed, device="cpu", strategy="negative-sampling")
        return train_negative_sampling(config, triples, None, 40, 4, progress=False).model.entity.weight.detach()

    first = weights(5)
    assert torch.equal(first, weights(5))
    assert not torch.equal(first, weights(6))


def test_validation_sample_is_seeded_and_the_restricted_filter_ranks_the_same() -> None:
    splits, entities, relations = umls()
    sample = negative_sampling.validation_sample(splits["valid"], 100, seed=3)
    assert len(sample) == 100 and len(np.unique(sample, axis=0)) == 100
    assert np.array_equal(sample, negative_sampling.validation_sample(splits["valid"], 100, seed=3))
    assert not np.array_equal(sample, negative_sampling.validation_sample(splits["valid"], 100, seed=4))
    assert negative_sampling.validation_sample(splits["valid"], 0, seed=3) is splits["valid"]
    known = np.concatenate([splits["train"], splits["valid"], splits["test"]])
    restricted = negative_sampling.relevant_filter(sample, known, relations)
    assert len(restricted) < len(known) / 2
    model = build_model("distmult", entities, relations, dim=16).eval()
    assert filtered_mrr(model, sample, restricted) == filtered_mrr(model, sample, known)
