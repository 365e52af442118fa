"""bpref and infAP on hand-computed rankings; infAP equals AP when every retrieved doc is judged."""
from __future__ import annotations

import numpy as np
import pytest

import pytrec_eval  # noqa: E402

from evaluation.core.macro import INFAP_EPSILON, evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec


def ours(qrels: dict, run: dict, measures: list[str]) -> dict[str, np.ndarray]:
    return evaluate(judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run)), measures)


def ranking(*docs: str) -> dict[str, float]:
    """Scores that put `docs` in the given order."""
    return {doc: float(len(docs) - i) for i, doc in enumerate(docs)}


def test_bpref_hand_case() -> None:
    # R = 2, three judged non-relevant. Ranking n1 r1 u n2 r2:
    # r1 has 1 non-relevant above: 1 - min(1, 2) / min(3, 2) = 0.5; r2 has 2: 1 - 2/2 = 0.
    qrels = {"q": {"r1": 1, "r2": 1, "n1": 0, "n2": 0, "n3": 0}}
    run = {"q": ranking("n1", "r1", "u", "n2", "r2")}
    assert ours(qrels, run, ["bpref"])["bpref"][0] == pytest.approx((0.5 + 0.0) / 2)


def test_bpref_ignores_unjudged_and_counts_unretrieved_relevant() -> None:
    # r2 not retrieved contributes 0 but counts in R; unjudged docs never penalise.
    qrels = {"q": {"r1": 1, "r2": 1, "n1": 0}}
    run = {"q": ranking("u1", "u2", "r1", "n1")}
    assert ours(qrels, run, ["bpref"])["bpref"][0] == pytest.approx(0.5)


def test_infap_hand_case() -> None:
    # r1 u n1 r2 p r3 with p pooled-but-unjudged (label -1) and r4 relevant but not retrieved.
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "n1": 0, "p": -1}}
    run = {"q": ranking("r1", "u", "n1", "r2", "p", "r3")}
    eps = INFAP_EPSILON

    def expected_precision(k: int, rel_above: int, nonrel_above: int, pooled_above: int) -> float:
        # Yilmaz & Aslam: 1/k + (k-1)/k * (pooled above / (k-1)) * smoothed precision above.
        if k == 1:
            return 1.0
        pooled = rel_above + nonrel_above + pooled_above
        return 1 / k + (k - 1) / k * (pooled / (k - 1)) * (rel_above + eps) / (rel_above + nonrel_above + 2 * eps)

    expected = (expected_precision(1, 0, 0, 0) + expected_precision(4, 1, 1, 0)
                + expected_precision(6, 2, 1, 1)) / 4
    value = ours(qrels, run, ["infAP"])["infAP"][0]
    assert value == pytest.approx(expected, abs=1e-12)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}).evaluate(run)["q"]["infAP"]
    assert value == pytest.approx(reference, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_infap_equals_ap_with_complete_judgments(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(50):
        docs = [f"d{i}" for i in rng.choice(500, size=int(rng.integers(2, 80)), replace=False)]
        retrieved = docs[: max(1, len(docs) - int(rng.integers(0, 5)))]  # some relevant unretrieved
        labels = rng.integers(0, 2, size=len(docs))
        labels[-1] = 1
        qrels[f"q{q}"] = {d: int(label) for d, label in zip(docs, labels)}
        run[f"q{q}"] = {d: float(s) for d, s in zip(retrieved, rng.random(len(retrieved)))}
    values = ours(qrels, run, ["infAP", "map"])
    # Equal up to infAP's epsilon smoothing (1e-5).
    np.testing.assert_allclose(values["infAP"], values["map"], atol=1e-4)
