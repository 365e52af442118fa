"""import_checkpoint: models trained with real PyKEEN (1.11) and imported from their save_to_directory output or
their training checkpoint score every question exactly like PyKEEN does, rank through the engine and pool like a
score matrix of PyKEEN's own predictions; unsupported models and bad files are refused with the file and reason
named and nothing is written."""
from __future__ import annotations

import gzip
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import UMLS, import_umls, pool_state, storage  # noqa: F401

pytestmark = [
    pytest.mark.django_db,
    # PyKEEN's own training noise on a CPU
    pytest.mark.filterwarnings("ignore:'pin_memory' argument:UserWarning"),
    pytest.mark.filterwarnings("ignore:Training instances are always shuffled:DeprecationWarning"),
]

# (case, PyKEEN model, inverse triples, model kwargs, --option values a training checkpoint needs)
CASES = [
    ("transe-p1", "TransE", False, {"scoring_fct_norm": 1}, {"scoring_fct_norm": "1"}),
    ("transe-p2-inverse", "TransE", True, {"scoring_fct_norm": 2}, {"scoring_fct_norm": "2"}),
    ("rotate", "RotatE", False, {}, {}),
    ("rotate-inverse", "RotatE", True, {}, {}),
    ("distmult", "DistMult", False, {}, {}),
    ("complex", "ComplEx", False, {}, {}),
    ("complex-inverse", "ComplEx", True, {}, {}),
    ("rescal", "RESCAL", False, {}, {}),
    ("conve-inverse", "ConvE", True, {"embedding_height": 4, "embedding_width": 4, "output_channels": 4},
     {"embedding_height": "4"}),
    ("conve-nobn-inverse", "ConvE", True, {"embedding_height": 2, "embedding_width": 8, "output_channels": 3,
                                           "apply_batch_normalization": False}, {"embedding_height": "2"}),
    ("tucker-inverse", "TuckER", True, {"relation_dim": 8}, {}),
    ("tucker-nobn-inverse", "TuckER", True, {"relation_dim": 6, "apply_batch_normalization": False}, {}),
]
DIM = 16


def _read_triples(path: Path) -> np.ndarray:
    return np.array([line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])


class PykeenRun:
    """One PyKEEN pipeline run: its in-memory model, output folder, training checkpoint and label maps."""

    def __init__(self, model, directory: Path, checkpoint: Path, entity_to_id: dict, relation_to_id: dict):
        self.model, self.directory, self.checkpoint = model, directory, checkpoint
        self.entity_to_id, self.relation_to_id = entity_to_id, relation_to_id

    def score_matrix(self, kg, questions) -> np.ndarray:
        """PyKEEN's predict_t / predict_h scores of our questions, columns in the KG's entity order."""
        import torch

        from pooling.engine.questions import TAIL
        from pooling.selectors.kg import kg_relation_keys
        from pooling.selectors.pools import entity_keys

        entity_ids = np.array([self.entity_to_id[key] for key in entity_keys(kg)])
        relation_ids = np.array([self.relation_to_id[key] for key in kg_relation_keys(kg)])
        anchors = torch.as_tensor(entity_ids[questions.anchor])
        relations = torch.as_tensor(relation_ids[questions.relation])
        tail = torch.as_tensor(questions.side == TAIL)
        scores = np.empty((len(questions), len(entity_ids)), dtype=np.float32)
        with torch.no_grad():
            if tail.any():
                scores[tail.numpy()] = self.model.predict_t(torch.stack([anchors[tail], relations[tail]], 1)).numpy()
            if (~tail).any():
                scores[~tail.numpy()] = self.model.predict_h(torch.stack([relations[~tail], anchors[~tail]], 1)).numpy()
        return scores[:, entity_ids]


@pytest.fixture(scope="module")
def pykeen_runs(tmp_path_factory) -> dict[str, PykeenRun]:
    """Every case trained by PyKEEN's pipeline (3 epochs on 300 UMLS triples, ids in a shuffled order)."""
    from pykeen.pipeline import pipeline
    from pykeen.triples import TriplesFactory

    rng = np.random.default_rng(7)
    triples = _read_triples(UMLS / "train.txt")
    everything = np.concatenate([triples] + [_read_triples(UMLS / f"{split}.txt") for split in ("valid", "test")])
    entities = sorted(set(everything[:, 0]) | set(everything[:, 2]))
    relations = sorted(set(everything[:, 1]))
    # ids in an order of their own, so the import has to match labels, not positions
    entity_to_id = {label: int(i) for label, i in zip(entities, rng.permutation(len(entities)))}
    relation_to_id = {label: int(i) for label, i in zip(relations, rng.permutation(len(relations)))}
    train, test = triples[:300], triples[300:320]
    runs = {}
    with _quick_pykeen():
        for case, model, inverse, kwargs, _options in CASES:
            folder = tmp_path_factory.mktemp(case)
            factory = dict(entity_to_id=entity_to_id, relation_to_id=relation_to_id, create_inverse_triples=inverse)
            result = pipeline(
                training=TriplesFactory.from_labeled_triples(train, **factory),
                testing=TriplesFactory.from_labeled_triples(test, **factory),
                model=model, model_kwargs={"embedding_dim": DIM, **kwargs}, random_seed=0, device="cpu",
                training_loop_kwargs=dict(automatic_memory_optimization=False),
                training_kwargs=dict(num_epochs=3, batch_size=128, use_tqdm=False, checkpoint_name="training.pt",
                                     checkpoint_directory=folder, checkpoint_frequency=0),
                evaluation_kwargs=dict(use_tqdm=False, batch_size=64),
            )
            result.save_to_directory(folder / "saved")
            result.model.eval()
            runs[case] = PykeenRun(result.model, folder / "saved", folder / "training.pt", entity_to_id, relation_to_id)
    return runs


@contextmanager
def _quick_pykeen():
    """One torch thread, and no gc.collect() after every PyKEEN epoch (0.5 s each in a big test process)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with mock.patch("pykeen.training.training_loop.gc", SimpleNamespace(collect=lambda: 0)):
            yield
    finally:
        torch.set_num_threads(threads)


def _state(system) -> dict:
    import torch

    from pooling.storage import storage_path

    return torch.load(storage_path(system.checkpoint_file), weights_only=True)["state_dict"]


@pytest.mark.parametrize("case", [case[0] for case in CASES])
def test_imported_pykeen_model_scores_ranks_and_pools_like_pykeen(case, pykeen_runs, storage):
    import torch

    from evaluation.services.ranks import can_evaluate
    from pooling.engine.questions import HEAD, TAIL
    from pooling.engine.ranking import rank, score_fn_from_matrix
    from pooling.kge import model_score_fn
    from pooling.models import System
    from pooling.selectors.pools import question_filter, ranking_result, sample_questions
    from pooling.services.checkpoint_import import import_checkpoint
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.rankings import import_scores, rank_system
    from pooling.services.samples import draw_sample
    from pooling.services.systems import load_system_model

    _case, model_name, inverse, _kwargs, options = next(c for c in CASES if c[0] == case)
    run = pykeen_runs[case]
    kg = import_umls()
    call_command("import_checkpoint", "umls", str(run.directory), "--format", "pykeen", "--name", "saved",
                 verbosity=0)
    from_checkpoint = import_checkpoint(kg, run.checkpoint, name="checkpoint", model=model_name.lower(),
                                        options=options)
    system = System.objects.get(kg=kg, name="saved")
    for imported in (system, from_checkpoint):
        assert imported.status == System.Status.READY and imported.origin == System.Origin.TRAINED
        assert imported.checkpoint_file and imported.config["imported"]["inverse_triples"] is inverse
        assert imported.config["imported"]["pykeen_model"] == model_name
        assert imported.valid_mrr is not None and imported.test_mrr is not None
    assert system.config["imported"]["kind"] == "save_to_directory"
    assert from_checkpoint.config["imported"]["kind"] == "training checkpoint"
    # both outputs of the run hold the same final weights
    saved, checkpointed = _state(system), _state(from_checkpoint)
    assert saved.keys() == checkpointed.keys()
    assert all(torch.equal(saved[key], checkpointed[key]) for key in saved)

    # scores of every question of a sample, both sides: ours (through the stored checkpoint) = PyKEEN's predict_*
    sample = draw_sample(kg, size=20, seed=3)
    sq = sample_questions(sample)
    theirs = run.score_matrix(kg, sq.questions)
    score = model_score_fn(load_system_model(system, device="cpu"))
    q = sq.questions
    scale = float(np.abs(theirs).max())
    for side in (HEAD, TAIL):
        rows = q.side == side
        assert rows.any()
        ours = score(torch.as_tensor(q.anchor[rows]), torch.as_tensor(q.relation[rows]), side).numpy()
        np.testing.assert_allclose(ours, theirs[rows], rtol=1e-5, atol=1e-6 * max(scale, 1.0))

    # filtered ranks through the engine: the imported system's stored ranking = the engine on PyKEEN's scores
    ranking = ranking_result(rank_system(system, sample, k=10))
    reference = rank(score_fn_from_matrix(theirs), sq.questions, num_entities=kg.num_entities,
                     filter=question_filter(kg, sq.questions), targets=sq.answers, k=10)
    assert np.array_equal(ranking.topk_entities, reference.topk_entities)
    np.testing.assert_allclose(ranking.topk_scores, reference.topk_scores, rtol=1e-5, atol=1e-6 * max(scale, 1.0))
    assert np.array_equal(ranking.num_candidates, reference.num_candidates)
    assert np.array_equal(ranking.greater, reference.greater) and np.array_equal(ranking.ties, reference.ties)
    assert np.array_equal(ranking.ranks(), reference.ranks())

    # and it pools like PyKEEN's own score matrix imported with import_scores
    np.save(storage.parent / "theirs.npy", theirs)
    matrix_system = import_scores(sample, storage.parent / "theirs.npy", name="pykeen-scores")
    pool = build_pool_now(create_pool(sample, [system], depth=5))
    matrix_pool = build_pool_now(create_pool(sample, [matrix_system], depth=5))
    assert pool_state(pool)[0] == pool_state(matrix_pool)[0] and pool_state(pool)[0]
    assert can_evaluate(system, sample) and can_evaluate(from_checkpoint, sample)  # from its checkpoint, any sample


def test_refused_pykeen_models_name_the_reason(pykeen_runs, storage, tmp_path):
    """ConvE / TuckER without inverse triples, TransE with a squared norm, RotatE without its unit-modulus
    constraint and models without a kgpool equivalent are refused; nothing is written."""
    import torch
    from pykeen.triples import TriplesFactory

    from pooling.models import System
    from pooling.services.checkpoint_import import CheckpointImportError, import_checkpoint

    kg = import_umls()
    run = next(iter(pykeen_runs.values()))
    train = _read_triples(UMLS / "train.txt")[:200]
    factory_args = dict(entity_to_id=run.entity_to_id, relation_to_id=run.relation_to_id)
    refused = {
        "ConvE": (False, {"embedding_height": 4, "embedding_width": 4, "output_channels": 2}, "without inverse triples"),
        "TuckER": (False, {"relation_dim": 4}, "without inverse triples"),
        "TransE": (True, {"scoring_fct_norm": 2, "power_norm": True}, "squared distance"),
        "RotatE": (True, {"relation_constrainer": None}, "not rotations"),
        "TransH": (False, {}, "hyperplane"),
        "HolE": (False, {}, "circular correlation"),
        "QuatE": (False, {}, "quaternion"),
    }
    with _quick_pykeen():
        for model, (inverse, kwargs, message) in refused.items():
            factory = TriplesFactory.from_labeled_triples(train, create_inverse_triples=inverse, **factory_args)
            folder = tmp_path / model
            folder.mkdir()
            # what PipelineResult.save_to_directory writes: the pickled model and the training triples
            torch.save(_train_only(model, factory, kwargs), folder / "trained_model.pkl")
            factory.to_path_binary(folder / "training_triples")
            with pytest.raises(CheckpointImportError) as error:
                import_checkpoint(kg, folder, name=f"bad-{model.lower()}")
            assert message in str(error.value) and "trained_model.pkl" in str(error.value), (model, str(error.value))
    assert not System.objects.exists()
    assert not list(storage.rglob("*.pt"))


def _train_only(model: str, factory, kwargs: dict):
    """A PyKEEN model trained for 2 epochs (no evaluation)."""
    from pykeen.models import model_resolver
    from pykeen.training import LCWATrainingLoop

    instance = model_resolver.make(model, triples_factory=factory, random_seed=0, embedding_dim=DIM, **kwargs)
    LCWATrainingLoop(model=instance, triples_factory=factory, automatic_memory_optimization=False).train(
        triples_factory=factory, num_epochs=2, batch_size=128, use_tqdm=False)
    return instance


def test_bad_checkpoints_are_refused_with_the_file_named(pykeen_runs, storage, tmp_path):
    from pooling.kge import build_model, save_checkpoint
    from pooling.models import System
    from pooling.services.checkpoint_import import CheckpointImportError, import_checkpoint

    kg = import_umls()
    transe, conve = pykeen_runs["transe-p1"], pykeen_runs["conve-inverse"]
    good = transe.checkpoint.read_bytes()
    (tmp_path / "text.pt").write_text("not a checkpoint\n")
    (tmp_path / "cut.pt").write_bytes(good[: len(good) // 2])
    (tmp_path / "empty-dir").mkdir()
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "trained_model.pkl").write_bytes((transe.directory / "trained_model.pkl").read_bytes())
    ours = tmp_path / "kgpool.pt"
    save_checkpoint(ours, build_model("distmult", kg.num_entities, kg.num_relations, dim=4), {"architecture": "distmult"})
    cases = {
        # name: (path, command arguments, expected message parts)
        "missing": (tmp_path / "absent.pt", [], ["absent.pt", "no such file"]),
        "kgpool-checkpoint": (ours, ["--model", "DistMult"], ["kgpool.pt", "no model_state_dict",
                                                              "it is a kgpool checkpoint"]),
        "text": (tmp_path / "text.pt", ["--model", "TransE"], ["text.pt", "cannot read"]),
        "truncated": (tmp_path / "cut.pt", ["--model", "TransE"], ["cut.pt", "truncated or corrupt"]),
        "empty-dir": (tmp_path / "empty-dir", [], ["empty-dir", "without trained_model.pkl"]),
        "no-labels": (lone, [], ["entity_to_id.tsv.gz", "no such file"]),
        "no-model": (transe.checkpoint, [], ["training.pt", "name its model class"]),
        "unknown-model": (transe.checkpoint, ["--model", "Bogus"], ["training.pt", "'Bogus'", "no exact kgpool"]),
        "refused-model": (transe.checkpoint, ["--model", "TransH"], ["training.pt", "TransH", "hyperplane"]),
        "no-norm": (transe.checkpoint, ["--model", "TransE"], ["training.pt", "scoring_fct_norm"]),
        "bad-norm": (transe.checkpoint, ["--model", "TransE", "--option", "scoring_fct_norm=3"],
                     ["training.pt", "p = 1 and 2"]),
        "unknown-option": (transe.checkpoint, ["--model", "TransE", "--option", "margin=1"],
                           ["unknown option", "margin"]),
        "option-syntax": (transe.checkpoint, ["--model", "TransE", "--option", "scoring_fct_norm"], ["KEY=VALUE"]),
        "wrong-shape-model": (transe.checkpoint, ["--model", "RESCAL"], ["training.pt", "RESCAL relation rows"]),
        "conve-ambiguous": (conve.checkpoint, ["--model", "ConvE"], ["training.pt", "image heights 2, 4",
                                                                     "embedding_height"]),
        "mismatched-model": (conve.directory, ["--model", "TuckER"], ["trained_model.pkl", "not TuckER"]),
        "options-on-pickle": (conve.directory, ["--option", "embedding_height=4"], ["only apply to training"]),
        "bad-format": (conve.directory, ["--format", "libkge"], ["invalid choice"]),
    }
    for name, (path, extra, messages) in cases.items():
        with pytest.raises(CommandError) as error:
            call_command("import_checkpoint", "umls", str(path), "--name", f"bad-{name}", *extra, verbosity=0)
        for message in messages:
            assert message in str(error.value), (name, str(error.value))
    with pytest.raises(CheckpointImportError, match="unknown checkpoint format 'libkge'"):
        import_checkpoint(kg, conve.directory, fmt="libkge", name="x")
    with pytest.raises(CheckpointImportError, match="must be a slug"):
        import_checkpoint(kg, conve.directory, name="not a slug")
    assert not System.objects.exists() and not list(storage.rglob("*.pt"))

    # the pickle itself (next to training_triples/) is as good as its folder; the default name is pykeen-<arch>
    system = import_checkpoint(kg, conve.directory / "trained_model.pkl")
    assert system.name == "pykeen-conve" and system.architecture == "conve" and system.status == System.Status.READY
    with pytest.raises(CheckpointImportError, match="already exists"):
        import_checkpoint(kg, conve.directory)


def test_labels_must_match_the_kg(pykeen_runs, storage, tmp_path):
    """Missing and extra entity / relation labels are named; the model is not imported."""
    import torch

    from pooling.models import System
    from pooling.services.checkpoint_import import CheckpointImportError, import_checkpoint

    kg = import_umls()
    run = pykeen_runs["distmult"]
    checkpoint = torch.load(run.checkpoint, weights_only=False)

    def variant(name: str, entity_map: dict, relation_map: dict) -> Path:
        path = tmp_path / f"{name}.pt"
        torch.save({**checkpoint, "entity_to_id_dict": entity_map, "relation_to_id_dict": relation_map}, path)
        return path

    entities, relations = dict(checkpoint["entity_to_id_dict"]), dict(checkpoint["relation_to_id_dict"])
    renamed = {("zz_unknown" if label == "virus" else label): i for label, i in entities.items()}
    renamed_relation = {("zz_rel" if label == "isa" else label): i for label, i in relations.items()}
    cases = {
        "entity": (variant("entity", renamed, relations), ["1 entities of the KG are not in the model", "'virus'",
                                                            "1 entities of the model are not in the KG", "'zz_unknown'"]),
        "relation": (variant("relation", entities, renamed_relation), ["relations do not match", "'isa'", "'zz_rel'"]),
        "no-maps": (variant("no-maps", None, None), ["no entity_to_id_dict", "CoreTriplesFactory"]),
        "gap": (variant("gap", {**entities, "virus": 999}, relations), ["ids must be 0.."]),
    }
    for name, (path, messages) in cases.items():
        with pytest.raises(CheckpointImportError) as error:
            import_checkpoint(kg, path, model="DistMult", name=f"bad-{name}")
        for message in messages:
            assert message in str(error.value), (name, str(error.value))
        assert f"{name}.pt" in str(error.value)
    # a label file of a save_to_directory folder that names another KG's entities
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "trained_model.pkl").write_bytes((run.directory / "trained_model.pkl").read_bytes())
    (folder / "training_triples").mkdir()
    for kind in ("entity", "relation"):
        source = (run.directory / "training_triples" / f"{kind}_to_id.tsv.gz")
        text = gzip.decompress(source.read_bytes()).decode()
        if kind == "entity":
            text = text.replace("\tvirus\n", "\tvirus_x\n")
        (folder / "training_triples" / f"{kind}_to_id.tsv.gz").write_bytes(gzip.compress(text.encode()))
    with pytest.raises(CheckpointImportError, match=r"'virus_x'") as error:
        import_checkpoint(kg, folder, name="bad-tsv")
    assert "trained_model.pkl" in str(error.value)
    assert not System.objects.exists() and not list(storage.rglob("*.pt"))


def test_import_checkpoint_help_documents_every_option():
    from pooling.management.commands.import_checkpoint import Command

    parser = Command().create_parser("manage.py", "import_checkpoint")
    text = parser.format_help()
    for option in ("--format", "--name", "--model", "--option", "--description", "--device"):
        assert option in text
    for word in ("save_to_directory", "training checkpoint", "scoring_fct_norm", "embedding_height",
                 "inverse triples"):
        assert word in " ".join(text.split()), word
