"""A model trained with real PyKEEN evaluates the same whichever way it enters: imported as a checkpoint (ranked
from kgpool's converted model) or as the score matrix of PyKEEN's own predictions (import_scores) -- every metric on
the sparse and completed labels, the completion questions included."""
from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest

from tests._pool_support import UMLS, import_umls, storage  # noqa: F401

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore:'pin_memory' argument:UserWarning"),
    pytest.mark.filterwarnings("ignore:Training instances are always shuffled:DeprecationWarning"),
]


def _train_pykeen(folder):
    """PyKEEN's DistMult, 3 epochs on 300 UMLS triples (a few seconds); returns the model and its label maps."""
    import torch
    from pykeen.pipeline import pipeline
    from pykeen.triples import TriplesFactory

    def read(name: str) -> np.ndarray:
        return np.array([line.split("\t") for line in (UMLS / name).read_text().splitlines() if line])

    everything = np.concatenate([read(f"{split}.txt") for split in ("train", "valid", "test")])
    entity_to_id = {label: i for i, label in enumerate(sorted(set(everything[:, 0]) | set(everything[:, 2])))}
    relation_to_id = {label: i for i, label in enumerate(sorted(set(everything[:, 1])))}
    factory = dict(entity_to_id=entity_to_id, relation_to_id=relation_to_id)
    train = read("train.txt")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with mock.patch("pykeen.training.training_loop.gc", SimpleNamespace(collect=lambda: 0)):
            result = pipeline(
                training=TriplesFactory.from_labeled_triples(train[:300], **factory),
                testing=TriplesFactory.from_labeled_triples(train[300:320], **factory),
                model="DistMult", model_kwargs={"embedding_dim": 16}, random_seed=0, device="cpu",
                training_loop_kwargs=dict(automatic_memory_optimization=False),
                training_kwargs=dict(num_epochs=3, batch_size=128, use_tqdm=False),
                evaluation_kwargs=dict(use_tqdm=False, batch_size=64),
            )
    finally:
        torch.set_num_threads(threads)
    result.save_to_directory(folder)
    result.model.eval()
    return result.model, entity_to_id, relation_to_id


def _pykeen_scores(model, entity_to_id, relation_to_id, kg, questions) -> np.ndarray:
    """PyKEEN's predict_t / predict_h of the questions, columns in the KG's entity order."""
    import torch

    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys

    entity_ids = np.array([entity_to_id[key] for key in entity_keys(kg)])
    relation_ids = np.array([relation_to_id[key] for key in kg_relation_keys(kg)])
    anchors = torch.as_tensor(entity_ids[questions.anchor])
    relations = torch.as_tensor(relation_ids[questions.relation])
    tail = questions.side == 1
    scores = np.empty((len(questions), len(entity_ids)), dtype=np.float32)
    with torch.no_grad():
        scores[tail] = model.predict_t(torch.stack([anchors[tail], relations[tail]], 1)).numpy()
        scores[~tail] = model.predict_h(torch.stack([relations[~tail], anchors[~tail]], 1)).numpy()
    return scores[:, entity_ids]


def test_pykeen_checkpoint_and_its_score_matrix_evaluate_identically(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys, pool_entry_array, sample_triples
    from pooling.selectors.questions import label_questions
    from pooling.services.checkpoint_import import import_checkpoint
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.rankings import import_scores
    from pooling.services.samples import draw_sample

    model, entity_to_id, relation_to_id = _train_pykeen(tmp_path / "saved")
    kg = import_umls()
    checkpoint = import_checkpoint(kg, tmp_path / "saved", name="pykeen-checkpoint")
    sample = draw_sample(kg, size=20, seed=3)
    pool = build_pool_now(create_pool(sample, [checkpoint], depth=3))
    entities, relations = entity_keys(kg), kg_relation_keys(kg)
    rng = np.random.default_rng(1)
    labels = [(h, r, t, "Y") for h, r, t in sample_triples(sample).tolist()]
    labels += [(h, r, t, "Y" if rng.random() < 0.3 else "N") for h, r, t, _d in pool_entry_array(pool).tolist()]
    (tmp_path / "labels.tsv").write_text("".join(f"{entities[h]}\t{relations[r]}\t{entities[t]}\t{y}\n"
                                                 for h, r, t, y in labels))
    asked = label_questions(sample, np.array([(h, r, t) for h, r, t, y in labels if y == "Y"]))
    (tmp_path / "questions.tsv").write_text("".join(
        f"{qid}\t{entities[asked.questions.anchor[row]]}\t{relations[asked.questions.relation[row]]}\n"
        for row, qid in enumerate(asked.qids)))
    assert len(asked) > asked.num_sampled  # completion questions to score
    np.save(tmp_path / "theirs.npy", _pykeen_scores(model, entity_to_id, relation_to_id, kg, asked.questions))
    matrix = import_scores(sample, tmp_path / "theirs.npy", name="pykeen-scores",
                           questions_path=tmp_path / "questions.tsv")

    result = evaluate_sample(sample, systems=[checkpoint, matrix], source=JudgmentsFile(tmp_path / "labels.tsv"),
                             options=EvaluationOptions(analyses=False))
    for set_name in ("sparse", "completed"):
        table = result.tables[set_name]
        # the same ranks (kgpool's converted model and PyKEEN score alike to float rounding, and nothing ties)
        for metric in table.columns:
            assert table.loc["pykeen-scores", metric] == pytest.approx(table.loc["pykeen-checkpoint", metric],
                                                                       rel=1e-12, abs=1e-12), (set_name, metric)
