"""Imports at Wikidata scale (issue 18): a TREC run and a score matrix are ranked in entity blocks, never as a
dense questions x entities matrix (tracemalloc peak well under its size), with the rankings of the unblocked path."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db

ENTITIES = 40_000


@pytest.fixture
def wide_sample(tmp_path):
    """A synthetic KG of over 15,000 entities and a sample of 120 test triples (about 240 questions)."""
    from pooling.engine.synthkg import SyntheticKG, write
    from pooling.selectors.pools import sample_questions
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import draw_sample

    write(SyntheticKG(triples=40_000, entities=ENTITIES, relations=20, seed=3), tmp_path / "kg")
    kg = import_kg("wide", tmp_path / "kg")
    sample = draw_sample(kg, size=120, seed=0)
    return kg, sample, sample_questions(sample)


def peak_of(run) -> tuple[object, int]:
    """(result, tracemalloc peak in bytes); the modules the importers load lazily (torch...) are loaded first."""
    import evaluation.core.trec  # noqa: F401
    import pooling.engine.ranking  # noqa: F401

    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def stored_arrays(system) -> dict[str, np.ndarray]:
    from pooling.models import Ranking
    from pooling.storage import load_arrays

    return load_arrays(Ranking.objects.get(system=system).ranking_file)


def assert_same_ranking(system, other) -> None:
    mine, theirs = stored_arrays(system), stored_arrays(other)
    assert mine.keys() == theirs.keys()
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)


def test_run_import_is_streamed(storage, wide_sample, tmp_path, settings, monkeypatch):
    from pooling.engine import ranking
    from pooling.selectors.pools import entity_keys
    from pooling.services.rankings import import_run

    kg, sample, sq = wide_sample
    assert kg.num_entities > 15_000
    keys = entity_keys(kg)
    rng = np.random.default_rng(0)
    lines = []
    for qid in sq.qids:  # 10 retrieved entities per question, integer scores: ties
        for entity in rng.choice(kg.num_entities, size=10, replace=False).tolist():
            lines.append(f"{qid} Q0 {keys[entity]} 0 {int(rng.integers(0, 5))} ext")
    for qid, answer in zip(sq.qids[:20], sq.answers.values[sq.answers.offsets[:20]]):  # a few answers retrieved
        lines.append(f"{qid} Q0 {keys[answer]} 0 2.5 ext")
    run_file = tmp_path / "ext.run"
    run_file.write_text("\n".join(dict.fromkeys(lines)) + "\n")  # no repeated line
    dense_bytes = len(sq) * kg.num_entities * 8  # float64, what the import used to build (in 256-row chunks)

    settings.KGPOOL_RANK_MEMORY_BYTES = 1 << 20
    monkeypatch.setattr(ranking, "MIN_AUTO_BLOCK", 1024)  # blocks of about 1,000 entities: 1.7 MB of scores
    blocked, peak = peak_of(lambda: import_run(sample, run_file, name="blocked"))
    assert peak < dense_bytes / 4, (peak, dense_bytes)
    settings.KGPOOL_RANK_MEMORY_BYTES = 1 << 40  # everything fits: one dense batch
    assert_same_ranking(blocked, import_run(sample, run_file, name="dense"))


@pytest.mark.parametrize("layout", ["npy", "npz-compressed-shuffled"])
def test_score_matrix_import_is_streamed(storage, wide_sample, tmp_path, settings, monkeypatch, layout):
    from pooling.engine import npzfiles, ranking
    from pooling.selectors.pools import entity_keys
    from pooling.services.rankings import import_scores
    from pooling import storage as stored_files

    kg, sample, sq = wide_sample
    rng = np.random.default_rng(1)
    matrix = rng.integers(0, 50, size=(len(sq), kg.num_entities)).astype(np.float64)  # ties
    matrix[rng.random(matrix.shape) < 0.01] = np.nan
    path = tmp_path / f"scores.{layout[:3]}"
    if layout == "npy":
        np.save(path, matrix)
    else:  # rows and columns in another order, named by qids / entities
        rows, columns = rng.permutation(len(sq)), rng.permutation(kg.num_entities)
        np.savez_compressed(path, scores=matrix[rows][:, columns], qids=np.array(sq.qids)[rows],
                            entities=np.array(entity_keys(kg))[columns])
    dense_bytes = matrix.nbytes
    del matrix

    settings.KGPOOL_RANK_MEMORY_BYTES = 1 << 20
    monkeypatch.setattr(ranking, "MIN_AUTO_BLOCK", 1024)
    monkeypatch.setattr(npzfiles, "ROW_BLOCK_BYTES", 1 << 20)  # the file is read 1 MiB at a time
    monkeypatch.setattr(stored_files, "WRITE_CHUNK_BYTES", 1 << 20)
    blocked, peak = peak_of(lambda: import_scores(sample, path, name="blocked", k=30))
    assert peak < dense_bytes / 4, (peak, dense_bytes)
    settings.KGPOOL_RANK_MEMORY_BYTES = 1 << 40
    assert_same_ranking(blocked, import_scores(sample, path, name="dense", k=30))
