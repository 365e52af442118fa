"""import_scores: a per-question score matrix (npy / npz, with or without entity and question indices) of a
system is stored as an imported system whose ranking and pool equal the trained system's; bad files are
refused with the file (and line) named and nothing is written."""
from __future__ import annotations

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def _score_matrix(system, sq) -> np.ndarray:
    """The trained model's full (Q, E) score matrix, rows in Question.position order."""
    import torch

    from pooling.kge import model_score_fn
    from pooling.services.systems import load_system_model

    score = model_score_fn(load_system_model(system, device="cpu"))
    rows = []
    with torch.no_grad():
        for row in range(len(sq)):
            rows.append(score(torch.tensor([sq.questions.anchor[row]]), torch.tensor([sq.questions.relation[row]]),
                              int(sq.questions.side[row]))[0].numpy())
    return np.stack(rows)


def test_import_scores_pools_like_the_trained_system(storage, tmp_path):
    from pooling.models import Ranking, System
    from pooling.selectors.pools import entity_keys, ranking_result, sample_questions
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.rankings import ScoresImportError, import_scores, rank_system
    from pooling.services.samples import draw_sample

    kg = import_umls()
    trained = train_tiny(kg, "distmult")
    sample = draw_sample(kg, size=15, seed=11)
    sq = sample_questions(sample)
    matrix = _score_matrix(trained, sq)
    keys = np.array(entity_keys(kg))
    qids = np.array(sq.qids)
    num_questions, num_entities = matrix.shape
    assert num_entities == kg.num_entities and num_questions == len(sq)

    rng = np.random.default_rng(0)
    row_perm, column_perm = rng.permutation(num_questions), rng.permutation(num_entities)
    shuffled = matrix[row_perm][:, column_perm]
    np.save(tmp_path / "plain.npy", matrix)
    np.savez(tmp_path / "shuffled.npz", scores=shuffled, entities=keys[column_perm], qids=qids[row_perm])
    np.save(tmp_path / "shuffled.npy", shuffled)
    (tmp_path / "entities.txt").write_text("\n".join(keys[column_perm]) + "\n")
    (tmp_path / "questions.tsv").write_text("\n".join(qids[row_perm]) + "\n")

    call_command("import_scores", "umls", sample.name, str(tmp_path / "plain.npy"), "--name", "plain", verbosity=0)
    call_command("import_scores", "umls", sample.name, str(tmp_path / "shuffled.npz"), "--name", "npz", verbosity=0)
    call_command("import_scores", "umls", sample.name, str(tmp_path / "shuffled.npy"), "--name", "text",
                 "--entities", str(tmp_path / "entities.txt"), "--questions", str(tmp_path / "questions.tsv"),
                 verbosity=0)
    imported = {}
    for name in ("plain", "npz", "text"):
        system = System.objects.get(kg=kg, name=name)
        assert system.origin == "imported" and system.status == "ready"
        ranking = Ranking.objects.get(system=system, sample=sample)
        assert ranking.filter == "train+valid+test"
        imported[name] = ranking_result(ranking)
    k = imported["plain"].k
    assert k == max(imported[name].k for name in imported)
    reference_ranking = rank_system(trained, sample, k=k)
    reference = ranking_result(reference_ranking)
    for name, result in imported.items():
        assert np.array_equal(result.topk_entities, reference.topk_entities), name
        # scored one question at a time here, in batches by rank_system: equal up to float rounding
        assert np.allclose(result.topk_scores, reference.topk_scores, rtol=1e-5, atol=1e-6, equal_nan=True), name
        assert np.array_equal(result.targets.values, reference.targets.values), name
        assert np.array_equal(result.num_candidates, reference.num_candidates), name
        assert np.array_equal(result.greater, reference.greater) and np.array_equal(result.ties, reference.ties)
        assert np.array_equal(result.ranks(), reference.ranks()), name
        assert Ranking.objects.get(system__name=name).mrr == pytest.approx(reference_ranking.mrr)
    # the full ranking: every candidate of the least-filtered question
    assert (reference.topk_entities >= 0).sum(axis=1).max() == k

    pool_trained = build_pool_now(create_pool(sample, [trained], depth=5))
    for name in ("plain", "npz"):
        pool = build_pool_now(create_pool(sample, [System.objects.get(name=name)], depth=5))
        assert pool_state(pool)[0] == pool_state(pool_trained)[0]

    # NaN-only rows are fine: nothing retrieved, the targets rank last (tied with every candidate)
    with_nan = matrix.copy()
    with_nan[0] = np.nan
    import_scores(sample, _save(tmp_path / "nan.npy", with_nan), name="nan-row")
    nan_result = ranking_result(Ranking.objects.get(system__name="nan-row"))
    assert (nan_result.topk_entities[0] == -1).all()
    assert np.array_equal(nan_result.topk_entities[1:], reference.topk_entities[1:])
    first = nan_result.target_questions() == 0
    assert first.any()
    assert np.array_equal(nan_result.ranks("pessimistic")[first], nan_result.num_candidates[first])

    # bad files: clear errors naming the file (and line), nothing written
    before = (System.objects.count(), Ranking.objects.count(), sorted(str(p) for p in storage.rglob("*")))
    good_entities = list(keys[column_perm])
    good_qids = list(qids[row_perm])
    object_entities = np.array(good_entities, dtype=object)
    cases = {
        # name: (scores file builder, extra arguments, expected message parts)
        "one-d": (lambda p: _save(p / "1d.npy", matrix[0]), [], ["1d.npy", "2-d"]),
        "three-d": (lambda p: _save(p / "3d.npy", matrix[None]), [], ["3d.npy", "2-d"]),
        "dtype": (lambda p: _save(p / "str.npy", matrix.astype(str)), [], ["str.npy", "numbers", "dtype"]),
        "e-mismatch": (lambda p: _save(p / "narrow.npy", matrix[:, :-1]), [], ["narrow.npy", "columns", "entities"]),
        "q-mismatch": (lambda p: _save(p / "short.npy", matrix[:-1]), [], ["short.npy", "rows", "questions"]),
        "unknown-entity": (lambda p: _save(p / "s.npy", shuffled),
                           ["--entities",
                            _lines(tmp_path / "ue.txt", good_entities[:3] + ["nope"] + good_entities[4:])],
                           ["ue.txt:4:", "'nope'", "not an entity"]),
        "duplicate-entity": (lambda p: _save(p / "s.npy", shuffled),
                             ["--entities", _lines(tmp_path / "de.txt", good_entities[:5] + good_entities[:1]
                                                   + good_entities[6:])],
                             ["de.txt:6:", "repeats line 1"]),
        "short-entities": (lambda p: _save(p / "s.npy", shuffled),
                           ["--entities", _lines(tmp_path / "se.txt", good_entities[:-1])],
                           ["se.txt", f"{num_entities - 1} entities", f"{num_entities} columns"]),
        "missing-entity": (lambda p: _save(p / "narrow2.npy", shuffled[:, :-1]),
                           ["--entities", _lines(tmp_path / "me.txt", good_entities[:-1])],
                           ["me.txt", "misses 1", "every entity needs a score"]),
        "npz-unknown-entity": (lambda p: _savez(p / "ue.npz", scores=shuffled,
                                                entities=np.array(good_entities[:-1] + ["zz"])),
                               [], ["ue.npz", f"entities[{num_entities - 1}] 'zz'", "not an entity"]),
        "npz-duplicate-entity": (lambda p: _savez(p / "de.npz", scores=shuffled,
                                                  entities=np.array(good_entities[:-1] + good_entities[:1])),
                                 [], ["de.npz", f"entities[{num_entities - 1}]", "repeats entities[0]"]),
        "unknown-qid": (lambda p: _save(p / "s.npy", shuffled),
                        ["--entities", str(tmp_path / "entities.txt"),
                         "--questions", _lines(tmp_path / "uq.tsv", good_qids[:2] + ["head99999"] + good_qids[3:])],
                        ["uq.tsv:3:", "'head99999'", "not a question of sample"]),
        "duplicate-qid": (lambda p: _save(p / "s.npy", shuffled),
                          ["--entities", str(tmp_path / "entities.txt"),
                           "--questions", _lines(tmp_path / "dq.tsv", good_qids[:-1] + good_qids[:1])],
                          ["dq.tsv:" + str(num_questions) + ":", "repeats line 1"]),
        "missing-question": (lambda p: _save(p / "fewer.npy", shuffled[:-1]),
                             ["--entities", str(tmp_path / "entities.txt"),
                              "--questions", _lines(tmp_path / "mq.tsv", good_qids[:-1])],
                             ["mq.tsv", "misses 1", "every question needs a row"]),
        "npz-unknown-qid": (lambda p: _savez(p / "uq.npz", scores=shuffled, entities=keys[column_perm],
                                             qids=np.array(["tail77777"] + good_qids[1:])),
                            [], ["uq.npz", "qids[0] 'tail77777'", "not a question"]),
        "both-indices": (lambda p: str(tmp_path / "shuffled.npz"), ["--entities", str(tmp_path / "entities.txt")],
                         ["shuffled.npz", "use one"]),
        "no-scores": (lambda p: _savez(p / "noscores.npz", matrix=matrix), [], ["noscores.npz", "no `scores`"]),
        "corrupt": (lambda p: _bytes(p / "corrupt.npy", b"\x93NUMPY garbage"), [], ["corrupt.npy", "cannot read"]),
        "truncated": (lambda p: _bytes(p / "cut.npz", (tmp_path / "shuffled.npz").read_bytes()[:200]), [],
                      ["cut.npz", "cannot read"]),
        "not-numpy": (lambda p: _bytes(p / "text.npy", b"head0 0.5\n"), [], ["text.npy", "cannot read"]),
        "missing-file": (lambda p: str(p / "absent.npy"), [], ["absent.npy", "no such file"]),
        "pickled-npy": (lambda p: _save(p / "obj.npy", matrix.astype(object), allow_pickle=True), [],
                        ["obj.npy", "pickled"]),
        "pickled-npz": (lambda p: _savez(p / "obj.npz", scores=shuffled, entities=object_entities), [],
                        ["obj.npz", "pickled"]),
        "unreadable-index": (lambda p: _save(p / "s.npy", shuffled),
                             ["--entities", _bytes(tmp_path / "latin.txt", b"\xff\xfe\x00bad\n")],
                             ["latin.txt", "cannot read"]),
    }
    for name, (build, extra, messages) in cases.items():
        folder = tmp_path / f"case-{name}"
        folder.mkdir()
        path = build(folder)
        with pytest.raises(CommandError) as error:
            call_command("import_scores", "umls", sample.name, path, "--name", f"bad-{name}", *extra, verbosity=0)
        for message in messages:
            assert message in str(error.value), (name, str(error.value))
        assert "(nothing was imported)" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_scores", "umls", sample.name, str(tmp_path / "plain.npy"), "--name", "plain",
                     verbosity=0)
    with pytest.raises(ScoresImportError, match="must be a slug"):
        import_scores(sample, tmp_path / "plain.npy", name="not a slug")
    assert (System.objects.count(), Ranking.objects.count(), sorted(str(p) for p in storage.rglob("*"))) == before


def _save(path, array, allow_pickle=False) -> str:
    np.save(path, array, allow_pickle=allow_pickle)
    return str(path)


def _savez(path, **arrays) -> str:
    np.savez(path, **arrays)
    return str(path)


def _lines(path, lines) -> str:
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _bytes(path, content: bytes) -> str:
    path.write_bytes(content)
    return str(path)
