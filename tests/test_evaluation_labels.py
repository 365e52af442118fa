"""Label sets: judgments file parsing and the sparse / completed / completed@d conventions."""
from __future__ import annotations

import numpy as np
import pytest

from tests._pool_support import import_umls, storage  # noqa: F401

pytestmark = pytest.mark.django_db


def _keys(kg):
    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys

    return entity_keys(kg), kg_relation_keys(kg)


def test_judgments_file_errors_name_the_line(storage, tmp_path):
    from evaluation.services.labels import JudgmentsFile, LabelError

    kg = import_umls()
    ents, rels = _keys(kg)
    cases = {
        "got 3 fields": f"{ents[0]}\t{rels[0]}\t{ents[1]}\n",
        "is not Y or N": f"{ents[0]}\t{rels[0]}\t{ents[1]}\tmaybe\n",
        "unknown entity 'nobody'": f"nobody\t{rels[0]}\t{ents[1]}\tY\n",
        "labelled both ways": f"{ents[0]}\t{rels[0]}\t{ents[1]}\tY\n{ents[0]}\t{rels[0]}\t{ents[1]}\tN\n",
    }
    for message, text in cases.items():
        path = tmp_path / "j.tsv"
        path.write_text("# comment\n" + text)
        with pytest.raises(LabelError) as info:
            JudgmentsFile(path).judged_triples(kg)
        assert "j.tsv:" in str(info.value) and message in str(info.value), str(info.value)
    path = tmp_path / "ok.tsv"
    path.write_text(f"{ents[0]}\t{rels[0]}\t{ents[1]}\tY\n{ents[0]}\t{rels[0]}\t{ents[1]}\ty\n{ents[2]} {rels[1]} {ents[3]} N\n")
    judged = JudgmentsFile(path).judged_triples(kg)
    assert judged.triples.tolist() == [[0, 0, 1], [2, 1, 3]] and judged.positive.tolist() == [True, False]


def test_completed_labels_depths_and_relabelling(storage, tmp_path):
    from evaluation.services.labels import JudgedTriples, completed_label_set, sparse_label_set
    from pooling.selectors.pools import sample_questions, sample_triples
    from pooling.services.samples import draw_sample

    kg = import_umls()
    sample = draw_sample(kg, size=10, seed=3)
    sampled = sample_triples(sample)
    sq = sample_questions(sample)
    # a sampled triple judged N, a new answer of the first question, a triple answering no question
    row = 0
    anchor, relation, side = int(sq.questions.anchor[row]), int(sq.questions.relation[row]), int(sq.questions.side[row])
    new_answer = next(e for e in range(kg.num_entities) if e not in sq.answers.row(row))
    new = (new_answer, relation, anchor) if side == 0 else (anchor, relation, new_answer)
    judged = JudgedTriples(np.array([sampled[0], new, [0, 45, 0]], dtype=np.int64), np.array([False, True, True]))
    completed = completed_label_set(sample, judged, pool=None)
    # (0, 45, 0) answers no sampled question (no question of relation 45 is anchored on entity 0): ignored
    assert not any(int(r) == 45 and int(a) == 0 for r, a in zip(sq.questions.relation, sq.questions.anchor))
    assert completed.stats["judged_ignored"] == 1
    assert completed.stats["relabelled_negative"] == 1
    labels = {tuple(t): (bool(p), int(d)) for t, p, d in zip(completed.triples.tolist(), completed.positive, completed.depth)}
    assert labels[tuple(sampled[0].tolist())] == (False, 0)
    assert labels[new] == (True, -1)  # no pool: unknown depth
    at_zero = completed.at_depth(0)
    assert len(at_zero) == len(sparse_label_set(sample)) and at_zero.num_negative == 1
    assert new not in {tuple(t) for t in at_zero.triples.tolist()}
