"""Entity-pair ranking (evaluation.core.pair_ranking), the rules the brute-force and hand-computed tests leave open
(issue 19, mutation testing): a 4 x 4 relation ranked by hand (ties, NaN, -inf, an excluded pair, k beyond the
candidates, every block size), TopPairs / KnownPairs (lookups past the last key, block offsets, the input forms
of the excluded pairs and their refusals: an (n, 3) array of triples was read as pairs when n was even),
known_pairs_by_relation by hand, every refusal's message whole, the metrics' keys. NumPy only (no torch)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from evaluation.core import pair_ranking
from evaluation.core.pair_ranking import (
    KnownPairs,
    TopPairs,
    average_precision_at_k,
    known_pairs_by_relation,
    pair_ranking_metrics,
    top_pairs,
    top_pairs_by_relation,
)
from tests._raises_support import whole

NAN, INF = float("nan"), float("inf")
# relation 0 of a 4-entity graph; (0, 1) is excluded
SCORES = np.array([[1.0, 5.0, 5.0, 0.0],
                   [5.0, 2.0, NAN, -INF],
                   [3.0, 3.0, 5.0, 1.0],
                   [0.0, 0.0, 0.0, 4.0]])
# by hand: score descending (NaN = -inf), then h, then t; (0, 1) left out
RANKED = [(0, 2, 5.0), (1, 0, 5.0), (2, 2, 5.0), (3, 3, 4.0), (2, 0, 3.0), (2, 1, 3.0), (1, 1, 2.0), (0, 0, 1.0),
          (2, 3, 1.0), (0, 3, 0.0), (3, 0, 0.0), (3, 1, 0.0), (3, 2, 0.0), (1, 2, -INF), (1, 3, -INF)]


def scorer(matrix: np.ndarray, dtype=np.float64):
    def score_block(relation: int, heads: np.ndarray) -> np.ndarray:
        assert relation == 0 and heads.dtype == np.int64
        return matrix[heads].astype(dtype)  # a fresh array: top_pairs may write into it
    return score_block


def test_block_scorer_alias() -> None:
    assert pair_ranking.BlockScorer == Callable[[int, np.ndarray], Any]


def test_public_names() -> None:
    assert sorted(pair_ranking.__all__) == sorted([
        "BlockScorer", "KnownPairs", "TopPairs", "top_pairs", "top_pairs_by_relation", "known_pairs_by_relation",
        "pair_ranking_metrics", "average_precision_at_k"])


@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 5, 1024])
def test_top_pairs_by_hand(block_size: int) -> None:
    for k in (1, 2, 3, 4, 5, 7, 9, 13, 14, 15, 16, 40):
        top = top_pairs(scorer(SCORES), 0, 4, k, block_size=block_size, exclude={(0, 1)})
        got = list(zip(top.heads.tolist(), top.tails.tolist(), top.scores.tolist()))
        assert got == RANKED[:k], (k, block_size)
        assert len(top) == min(k, 15) and top.pairs() == [(h, t) for h, t, _ in RANKED[:k]]
        assert top.heads.dtype == np.int64 and top.tails.dtype == np.int64 and top.scores.dtype == np.float64


def test_top_pairs_without_exclusion_and_with_integer_scores() -> None:
    top = top_pairs(scorer(np.nan_to_num(SCORES, nan=0.0, neginf=-1.0), np.int64), 0, 4, 16, block_size=3)
    # integers: 5 (0, 1), (0, 2), (1, 0), (2, 2); 4; 3, 3; 2; 1, 1; then the 0s (h, t order: the NaN is 0 now)
    assert top.pairs()[:4] == [(0, 1), (0, 2), (1, 0), (2, 2)]
    assert top.pairs()[9:] == [(2, 3), (0, 3), (1, 2), (3, 0), (3, 1), (3, 2), (1, 3)]
    assert top.scores.tolist()[-1] == -1.0 and top.scores.dtype == np.float64


def test_all_candidates_minus_infinity_or_excluded() -> None:
    matrix = np.full((3, 3), -INF)
    matrix[1, 1] = NAN
    top = top_pairs(scorer(matrix), 0, 3, 4, block_size=2, exclude=np.array([[0, 0], [2, 2]]))
    assert top.pairs() == [(0, 1), (0, 2), (1, 0), (1, 1)] and top.scores.tolist() == [-INF] * 4
    everything = {(h, t) for h in range(3) for t in range(3)}
    top = top_pairs(scorer(matrix), 0, 3, 4, block_size=2, exclude=everything)
    assert len(top) == 0 and top.pairs() == []


def test_nan_in_the_first_rows_does_not_raise_the_bound() -> None:
    # the first block's bound comes from its first row: its NaN must count as -inf there too
    matrix = np.array([[NAN, 1.0, NAN], [0.0, 2.0, 0.5], [3.0, NAN, -1.0]])
    ranked = [(2, 0, 3.0), (1, 1, 2.0), (0, 1, 1.0), (1, 2, 0.5), (1, 0, 0.0), (2, 2, -1.0), (0, 0, -INF),
              (0, 2, -INF), (2, 1, -INF)]
    for block_size in (1, 2, 3):
        for k in (1, 2, 3, 9):
            top = top_pairs(scorer(matrix), 0, 3, k, block_size=block_size)
            assert list(zip(top.heads.tolist(), top.tails.tolist(), top.scores.tolist())) == ranked[:k]


def test_top_pairs_refusals() -> None:
    with pytest.raises(ValueError, match=whole("k must be >= 1")):
        top_pairs(scorer(SCORES), 0, 4, 0)
    with pytest.raises(ValueError, match=whole("block_size must be >= 1")):
        top_pairs(scorer(SCORES), 0, 4, 3, block_size=0)
    with pytest.raises(ValueError, match=whole("block scorer returned shape (2, 3), expected (2, 4)")):
        top_pairs(lambda relation, heads: SCORES[heads][:, :3].copy(), 0, 4, 3, block_size=2)
    with pytest.raises(ValueError, match=whole("block scorer returned shape (4,), expected (1, 4)")):
        top_pairs(lambda relation, heads: SCORES[heads[0]].copy(), 0, 4, 3, block_size=1)
    with pytest.raises(ValueError, match=whole("KnownPairs built for another number of entities")):
        top_pairs(scorer(SCORES), 0, 4, 3, exclude=KnownPairs(np.array([0]), np.array([1]), 5))
    with pytest.raises(ValueError, match=whole("pair entity ids must lie in 0..3")):
        top_pairs(scorer(SCORES), 0, 4, 3, exclude={(0, 4)})


def test_excluded_pair_forms() -> None:
    expected = [(h, t) for h, t, _ in RANKED]
    for form in ({(0, 1)}, [(0, 1)], np.array([[0, 1]]), np.array([[0, 1], [0, 1]]), KnownPairs([0], [1], 4),
                 iter([(0, 1)])):
        assert top_pairs(scorer(SCORES), 0, 4, 16, exclude=form).pairs() == expected
    for empty in (set(), [], np.zeros((0, 2), dtype=np.int64), np.zeros(0)):
        assert len(top_pairs(scorer(SCORES), 0, 4, 16, exclude=empty)) == 16
    # triples, a flat pair, an (n, 3) array with n even: not (h, t) pairs
    for bad in (np.array([[0, 1, 2], [1, 2, 3]]), np.array([0, 1]), [(0, 1, 2)], np.array([[[0, 1]]])):
        with pytest.raises(ValueError, match=whole("excluded pairs must be (h, t) pairs")):
            KnownPairs.coerce(bad, 4)


def test_known_pairs() -> None:
    known = KnownPairs(np.array([3, 0, 2, 0, 3]), np.array([1, 2, 3, 2, 3]), 4)
    assert len(known) == 4 and known.num_entities == 4 and known.keys.tolist() == [2, 11, 13, 15]
    assert all(pair in known for pair in [(3, 1), (0, 2), (2, 3), (3, 3)])
    assert not any(pair in known for pair in [(0, 0), (0, 3), (2, 2), (3, 2), (1, 1), (4, 0)])  # (4, 0): past the end
    # offsets inside a block of heads (row * E + tail, the block's first row being 0)
    assert known.block_offsets(0, 1).tolist() == [2]
    assert known.block_offsets(0, 4).tolist() == [2, 11, 13, 15]
    assert known.block_offsets(1, 3).tolist() == [7]  # (2, 3): row 1 of the block
    assert known.block_offsets(3, 4).tolist() == [1, 3]
    assert known.block_offsets(1, 2).tolist() == []
    assert KnownPairs.coerce(known, 4) is known
    empty = KnownPairs(np.zeros(0), np.zeros(0), 3)
    assert len(empty) == 0 and (0, 0) not in empty and empty.block_offsets(0, 3).tolist() == []
    with pytest.raises(ValueError, match=whole("heads and tails must have the same length")):
        KnownPairs(np.array([0, 1]), np.array([1]), 4)
    for heads, tails in (([0, 4], [1, 1]), ([0, 1], [1, 4]), ([-1], [0]), ([0], [-1])):
        with pytest.raises(ValueError, match=whole("pair entity ids must lie in 0..3")):
            KnownPairs(np.array(heads), np.array(tails), 4)


def test_known_pairs_by_relation() -> None:
    triples = np.array([(2, 1, 0), (0, 0, 1), (1, 1, 1), (0, 3, 2), (2, 1, 0), (3, 0, 3)])
    known = known_pairs_by_relation(triples, 4)
    assert sorted(known) == [0, 1, 3] and all(type(r) is int for r in known)
    assert known[0].keys.tolist() == [1, 15] and known[1].keys.tolist() == [5, 8] and known[3].keys.tolist() == [2]
    assert all(pairs.num_entities == 4 for pairs in known.values())
    assert known_pairs_by_relation(np.zeros((0, 3)), 4) == {}


def test_top_pairs_by_relation() -> None:
    def score_block(relation: int, heads: np.ndarray) -> np.ndarray:
        return SCORES[heads] * (1 if relation == 0 else -1)

    known = known_pairs_by_relation(np.array([(0, 0, 1), (3, 5, 3)]), 4)
    tops = top_pairs_by_relation(score_block, np.array([5, 0]), 4, 3, block_size=2, known=known)
    assert list(tops) == [5, 0] and all(type(r) is int for r in tops)
    assert tops[0].pairs() == [(0, 2), (1, 0), (2, 2)]
    # relation 5: negated scores, (3, 3) excluded: -(-inf) at (1, 3) first, then the zeros (0, 3), (3, 0)
    assert tops[5].pairs() == [(1, 3), (0, 3), (3, 0)]
    unknown = top_pairs_by_relation(score_block, [0], 4, 2)
    assert unknown[0].pairs() == [(0, 1), (0, 2)]


def test_top_pairs_record() -> None:
    top = TopPairs(np.array([1, 0]), np.array([2, 3]), np.array([0.5, 0.25]))
    assert len(top) == 2 and top.pairs() == [(1, 2), (0, 3)]
    with pytest.raises(AttributeError):
        top.heads = np.zeros(0)  # frozen


def test_metric_refusals_and_keys() -> None:
    with pytest.raises(ValueError, match=whole("AP@K needs at least one relevant item")):
        average_precision_at_k(np.array([1]), 0, 3)
    with pytest.raises(ValueError, match=whole("k must be >= 1")):
        pair_ranking_metrics({}, {0: {(0, 0)}}, 0)
    top = {0: TopPairs(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([3.0, 2.0, 1.0]))}
    # K = 2: (0, 0) relevant, (1, 1) not; (2, 2) relevant but beyond K. AP = 1 / min(2, 2), P = 1 / 2
    metrics = pair_ranking_metrics(top, {0: {(0, 0), (2, 2)}, 7: {(1, 1)}}, 2)
    assert metrics["k"] == 2 and metrics["num_relations"] == 2 and metrics["missing"] == [7]
    assert metrics["per_relation"][0] == {"AP@2": 0.5, "P@2": 0.5, "hits": 1.0, "num_relevant": 2.0}
    assert metrics["per_relation"][7] == {"AP@2": 0.0, "P@2": 0.0, "hits": 0.0, "num_relevant": 1.0}
    assert metrics["MAP@2"] == 0.25 and metrics["P@2"] == 0.25
    assert metrics["WMAP@2"] == pytest.approx(1 / 3) and metrics["WP@2"] == pytest.approx(1 / 3)
    assert set(metrics) == {"MAP@2", "P@2", "WMAP@2", "WP@2", "k", "num_relations", "missing", "per_relation"}
    # K = 1; a relation without relevant pairs first is skipped, the next ones still count
    metrics = pair_ranking_metrics(top, {0: set(), 3: {(0, 0)}, 4: {(1, 1)}}, 1)
    assert metrics["num_relations"] == 2 and metrics["missing"] == [3, 4] and metrics["MAP@1"] == 0.0
    metrics = pair_ranking_metrics({**top, 3: top[0]}, {0: set(), 3: {(0, 0)}}, 1)
    assert metrics["MAP@1"] == 1.0 and metrics["P@1"] == 1.0 and metrics["missing"] == []
    empty = pair_ranking_metrics(top, {}, 3)
    assert all(np.isnan(empty[name]) for name in ("MAP@3", "P@3", "WMAP@3", "WP@3"))
    assert (empty["k"], empty["num_relations"], empty["missing"], empty["per_relation"]) == (3, 0, [], {})
    # AP@K with fewer relevant than K: divides by their number; relevance beyond K ignored
    assert average_precision_at_k(np.array([0, 1, 1, 1]), 1, 3) == pytest.approx(1 / 2 + 2 / 3)
    assert average_precision_at_k(np.array([0, 1, 1, 1]), 5, 3) == pytest.approx((1 / 2 + 2 / 3) / 3)


def test_torch_selection_edges() -> None:
    # the accelerator path (_torch_block_top), run on CPU tensors: integer scores with exclusions, one NaN at the
    # top (NaN ranks last, whatever torch.topk does with it), float64 tensors kept in float64
    torch = pytest.importorskip("torch")
    from evaluation.core.pair_ranking import _cpu_tensor_as_numpy, _torch_block_top

    offsets, values = _torch_block_top(torch.tensor([[4, 9], [7, 1]]), np.array([1]), 2)
    assert offsets.tolist() == [2, 0] and values.tolist() == [7.0, 4.0]
    offsets, values = _torch_block_top(torch.tensor([NAN, 5.0, 3.0, 1.0]), np.zeros(0, dtype=np.int64), 2)
    assert offsets.tolist() == [1, 2] and values.tolist() == [5.0, 3.0]
    close = torch.tensor([[1.0 + 1e-12, 1.0]], dtype=torch.float64)
    assert _cpu_tensor_as_numpy(close).dtype == np.float64 and _cpu_tensor_as_numpy(close)[0, 0] > 1.0
    top = top_pairs(lambda relation, heads: torch.tensor([[1.0, 1.0 + 1e-12]], dtype=torch.float64), 0, 2, 1,
                    block_size=1, exclude={(1, 0), (1, 1)})
    assert top.pairs() == [(0, 1)] and top.scores.tolist() == [1.0 + 1e-12]
