"""Score ties follow trec_eval: docid in descending string order; the file's rank column is ignored."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core.macro import evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec


def ranks_of_judged(qrels: dict, run: dict) -> dict[str, float]:
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    return evaluate(judged, ["recip_rank"])["recip_rank"]


def test_tied_documents_are_ordered_by_descending_docid() -> None:
    # Ranking by trec_eval: c (1.0), b (1.0), a (1.0), z (0.5): the relevant 'a' is third.
    qrels = {"q": {"a": 1, "z": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "z": 0.5}}
    assert ranks_of_judged(qrels, run)[0] == pytest.approx(1 / 3)


def test_descending_order_is_string_order_not_numeric() -> None:
    # "d9" > "d10" as strings, so d9 comes first and the relevant d10 is second.
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d9": 2.0, "d10": 2.0}}
    assert ranks_of_judged(qrels, run)[0] == pytest.approx(1 / 2)


def test_higher_score_beats_docid(tmp_path) -> None:
    # Rank column says the relevant doc is first; the scores say third: scores win.
    run_file = tmp_path / "run.txt"
    run_file.write_text("q Q0 rel 1 0.1 t\nq Q0 x 2 0.9 t\nq Q0 y 3 0.5 t\n")
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("q 0 rel 1\n")
    from evaluation.core.trec import read_qrels, read_run

    judged = judged_ranking_from_trec(read_qrels(qrels_file), read_run(run_file))
    values = evaluate(judged, ["recip_rank", "P_2", "success_3", "map"])
    assert values["recip_rank"][0] == pytest.approx(1 / 3)
    assert values["P_2"][0] == 0.0
    assert values["success_3"][0] == 1.0
    assert values["map"][0] == pytest.approx(1 / 3)


def test_row_order_of_the_run_does_not_matter() -> None:
    # Interleaved queries, rows neither sorted by score nor by docid: same result as a tidy run.
    rng = np.random.default_rng(0)
    query = np.array(["q2", "q1", "q2", "q1", "q1", "q2", "q1"] * 3, dtype=object)
    doc = np.array([f"d{i}" for i in range(len(query))], dtype=object)
    score = rng.integers(0, 3, size=len(query)).astype(float)
    qrels = Qrels.from_columns(np.array(["q1", "q1", "q2", "q2"], dtype=object),
                               np.array(["d1", "d4", "d2", "d20"], dtype=object), np.array([1, 1, 1, 0]))
    shuffled = judged_ranking_from_trec(qrels, Run.from_columns(query, doc, score))
    tidy_order = sorted(range(len(query)), key=lambda i: (query[i], -score[i], tuple(-ord(c) for c in doc[i])))
    tidy = judged_ranking_from_trec(qrels, Run.from_columns(query[tidy_order], doc[tidy_order], score[tidy_order]))
    np.testing.assert_array_equal(shuffled.ranks, tidy.ranks)
    np.testing.assert_array_equal(shuffled.offsets, tidy.offsets)
    measures = ["map", "recip_rank", "bpref", "P_5"]
    for name, values in evaluate(shuffled, measures).items():
        np.testing.assert_allclose(values, evaluate(tidy, measures)[name])
