"""Entity-pair ranking (issue #16): the top-K (h, t) pairs of one relation over all E x E pairs, and MAP@K / P@K.

Protocol (Wang et al. 2019, "On evaluating embedding models for knowledge base completion"; used by
Shirvani-Mahdavi, Akrami and Li, "On large-scale evaluation of embedding models for knowledge graph completion"):
for each relation r, a system ranks every pair (h, t) of entities by the score of (h, r, t); pairs already known
(train / valid) are not candidates. With T_r the relevant pairs of r (its test pairs; with completed labels also
the pairs judged positive) and rel_i = 1 when the i-th ranked pair is in T_r:

    P_r@i   = (1/i) * sum_{j<=i} rel_j                      (precision of the first i pairs)
    AP_r@K  = (1 / min(K, |T_r|)) * sum_{i<=K} P_r@i * rel_i
    P_r@K   = (sum_{i<=K} rel_i) / K                        (divides by K even when fewer pairs were ranked)
    MAP@K   = mean of AP_r@K over the relations with |T_r| > 0;  P@K likewise
    WMAP@K  = sum_r |T_r| * AP_r@K / sum_r |T_r|;            WP@K likewise (weighted by the relevant pairs)

A relation with relevant pairs but no ranking (the system scored nothing for it) counts as an empty ranking
(AP = P = 0) and is listed under ``missing``; relations without relevant pairs are left out of every average.

Blocked top-K (:func:`top_pairs`): the heads are visited in blocks; the block scorer returns the scores of
(block heads x all tails); excluded pairs are set to -inf by index arithmetic on the block; the block's exact top-K
under the tie order below is merged into the running top-K (never more than 2K pairs held), so memory is
O(block_size x E + K) and an E x E matrix never exists.

Tie order (deterministic, independent of the block size and of the scorer's backend): score descending, then
head id ascending, then tail id ascending (the pair key h * E + t ascending). NaN scores count as -inf (as
``pooling.engine.ranking``). Pairs scored -inf are still candidates (ranked last); excluded pairs never are.

Selection on the CPU costs one comparison pass per block: only the pairs scoring at least the running k-th best
score (a lower bound of the final k-th) are kept and sorted. The block scorer may return a NumPy array or a torch
tensor (e.g. ``pooling.kge.protocol_scoring``); a CPU tensor is read as NumPy without a copy, a tensor on an
accelerator is reduced there with ``torch.topk`` (this module never imports torch itself). The returned block
may be modified in place, so return a fresh array, not a view of the scorer's state.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

__all__ = ["BlockScorer", "KnownPairs", "TopPairs", "top_pairs", "top_pairs_by_relation", "known_pairs_by_relation",
           "pair_ranking_metrics", "average_precision_at_k"]

#: (relation, head_ids) -> scores [len(head_ids), num_entities] of (h, relation, t) for every tail t.
BlockScorer = Callable[[int, np.ndarray], Any]


@dataclass(frozen=True)
class TopPairs:
    """The best pairs of one relation, best first (length <= k)."""

    heads: np.ndarray  # int64
    tails: np.ndarray  # int64
    scores: np.ndarray  # float64 (the scorer's values, exactly)

    def __len__(self) -> int:
        return len(self.heads)

    def pairs(self) -> list[tuple[int, int]]:
        return list(zip(self.heads.tolist(), self.tails.tolist()))


class KnownPairs:
    """A set of (h, t) pairs of one relation stored as sorted unique keys h * E + t (int64), for cheap lookups
    of the pairs that fall into a block of heads."""

    def __init__(self, heads: np.ndarray, tails: np.ndarray, num_entities: int) -> None:
        heads = np.asarray(heads, dtype=np.int64).reshape(-1)
        tails = np.asarray(tails, dtype=np.int64).reshape(-1)
        if heads.shape != tails.shape:
            raise ValueError("heads and tails must have the same length")
        if len(heads) and (min(heads.min(), tails.min()) < 0 or max(heads.max(), tails.max()) >= num_entities):
            raise ValueError(f"pair entity ids must lie in 0..{num_entities - 1}")
        self.num_entities = int(num_entities)
        self.keys = np.unique(heads * self.num_entities + tails)

    @classmethod
    def coerce(cls, pairs: ExcludeLike, num_entities: int) -> KnownPairs:
        """From a KnownPairs, a set / iterable of (h, t) tuples, or an int array [n, 2]."""
        if isinstance(pairs, KnownPairs):
            if pairs.num_entities != num_entities:
                raise ValueError("KnownPairs built for another number of entities")
            return pairs
        array = np.asarray(pairs if isinstance(pairs, np.ndarray) else list(pairs), dtype=np.int64)
        if not array.size:
            array = np.zeros((0, 2), dtype=np.int64)
        if array.ndim != 2 or array.shape[1] != 2:  # checked before any reshape: triples are not pairs
            raise ValueError("excluded pairs must be (h, t) pairs")
        return cls(array[:, 0], array[:, 1], num_entities)

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, pair: tuple[int, int]) -> bool:
        key = int(pair[0]) * self.num_entities + int(pair[1])
        position = int(np.searchsorted(self.keys, key))
        return position < len(self.keys) and int(self.keys[position]) == key

    def block_offsets(self, first_head: int, stop_head: int) -> np.ndarray:
        """Flat offsets (row * E + tail) of the known pairs with first_head <= h < stop_head, inside that block."""
        start, stop = np.searchsorted(self.keys, [first_head * self.num_entities, stop_head * self.num_entities])
        return self.keys[start:stop] - first_head * self.num_entities


ExcludeLike = Union[KnownPairs, Iterable[tuple[int, int]], np.ndarray]


def known_pairs_by_relation(triples: np.ndarray, num_entities: int) -> dict[int, KnownPairs]:
    """{relation: KnownPairs} of an int array of (h, r, t) triples (e.g. train + valid), for ``exclude``."""
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    order = np.argsort(triples[:, 1], kind="stable")
    grouped = triples[order]
    relations, starts = np.unique(grouped[:, 1], return_index=True)
    bounds = list(starts) + [len(grouped)]
    return {int(r): KnownPairs(grouped[bounds[i]:bounds[i + 1], 0], grouped[bounds[i]:bounds[i + 1], 2],
                               num_entities)
            for i, r in enumerate(relations)}


# ---------------------------------------------------------------------- selection inside one block
def _exact_block_top(values: np.ndarray, excluded: np.ndarray, k: int) -> np.ndarray:
    """Flat offsets of the block's top-k candidates under (score desc, offset asc), best first.

    ``values`` is the flattened block (NaN already -inf or not: handled here), ``excluded`` flat offsets that are
    not candidates. Exact for ties: everything above the k-th value, then the tied ones by offset.
    """
    values = np.where(np.isnan(values), -np.inf, values)
    if len(excluded):
        valid = np.ones(len(values), dtype=bool)
        valid[excluded] = False
        candidates = np.flatnonzero(valid)
        candidate_values = values[candidates]
    else:
        candidates = np.arange(len(values), dtype=np.int64)
        candidate_values = values
    if len(candidates) > k:
        threshold = np.partition(candidate_values, len(candidates) - k)[len(candidates) - k]
        greater = candidates[candidate_values > threshold]
        tied = candidates[candidate_values == threshold][: k - len(greater)]  # ascending offsets
        candidates = np.concatenate([greater, tied])
        candidate_values = values[candidates]
    order = np.lexsort((candidates, -candidate_values))
    return candidates[order]


def _is_torch_tensor(block: Any) -> bool:
    return type(block).__module__.split(".", 1)[0] == "torch"


def _cpu_tensor_as_numpy(block: Any) -> np.ndarray:
    """A CPU tensor as NumPy without a copy (float32 / float64); other float types are widened first."""
    block = block.detach()
    if str(block.dtype) not in ("torch.float32", "torch.float64"):
        block = block.float()
    return block.numpy()


def _torch_block_top(block: Any, excluded: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(flat offsets, values) of the top-k of a torch block on an accelerator: ``torch.topk`` on the fast path,
    the exact NumPy selection when the k-th value is tied, NaN, or reaches -inf (where excluded pairs sit)."""
    import torch  # the caller's scorer already returned a tensor, so torch is there

    flat = block.detach().reshape(-1)
    if not flat.is_floating_point():
        flat = flat.double()
    n = flat.numel()
    if len(excluded):
        flat[torch.from_numpy(excluded).to(flat.device)] = float("-inf")
    values, offsets = torch.topk(flat, min(k + 1, n), sorted=True)
    values_np = values.double().cpu().numpy()
    fast = (n > k and values_np[k - 1] > values_np[k] and values_np[k - 1] > -np.inf
            and not np.isnan(values_np).any())
    if fast:
        offsets_np = offsets[:k].cpu().numpy().astype(np.int64)
        chosen = values_np[:k]
        order = np.lexsort((offsets_np, -chosen))
        return offsets_np[order], chosen[order]
    return _numpy_block_top(_cpu_tensor_as_numpy(flat.cpu()), excluded, k, None, n)


def _numpy_block_top(block: np.ndarray, excluded: np.ndarray, k: int, bound: float | None, row_length: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(flat offsets, float64 values) of the block's top-k, best first, exact under the tie order.

    Pairs below ``bound`` (the running k-th best score; a lower bound of the final k-th) cannot enter the
    top-k, so one comparison pass keeps only the few pairs >= bound. Without a running k-th, the bound is the
    k-th best of the block's first row(s), also a lower bound. A bound of -inf (fewer than k finite candidates,
    NaN or excluded pairs reached) takes the exact selection over the whole block.
    """
    flat = block.reshape(-1)
    if not np.issubdtype(flat.dtype, np.floating):
        flat = flat.astype(np.float64)  # integer scores: -inf must fit
    if len(excluded):
        flat[excluded] = -np.inf
    if bound is None:
        sample = flat[: max(k, row_length)]
        sample = np.where(np.isnan(sample), -np.inf, sample)
        bound = float(np.partition(sample, len(sample) - k)[len(sample) - k]) if len(sample) >= k else -np.inf
    if not bound > -np.inf:
        chosen = _exact_block_top(flat, excluded, k)
        values = flat[chosen].astype(np.float64)
        return chosen, np.where(np.isnan(values), -np.inf, values)
    offsets = np.flatnonzero(flat >= bound)  # NaN and excluded (-inf) fail the test
    values = flat[offsets]
    local = _exact_block_top(values, np.zeros(0, dtype=np.int64), k)  # positions ascend with the offsets
    return offsets[local], values[local].astype(np.float64)


def top_pairs(score_block: BlockScorer, relation: int, num_entities: int, k: int, *, block_size: int = 1024,
              exclude: ExcludeLike | None = None) -> TopPairs:
    """The top-k (h, t) pairs of ``relation`` over all E x E pairs, blocked over heads (see the module docstring).

    ``exclude``: pairs that are not candidates (train / valid pairs of this relation), as :class:`KnownPairs`,
    a set of (h, t) tuples or an int array [n, 2].
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    num_entities = int(num_entities)
    known = KnownPairs.coerce(exclude, num_entities) if exclude is not None else None
    best_keys = np.zeros(0, dtype=np.int64)
    best_scores = np.zeros(0, dtype=np.float64)
    for first in range(0, num_entities, block_size):
        stop = min(first + block_size, num_entities)
        heads = np.arange(first, stop, dtype=np.int64)
        block = score_block(int(relation), heads)
        shape = tuple(block.shape)
        if shape != (len(heads), num_entities):
            raise ValueError(f"block scorer returned shape {shape}, expected {(len(heads), num_entities)}")
        excluded = known.block_offsets(first, stop) if known is not None else np.zeros(0, dtype=np.int64)
        if _is_torch_tensor(block) and block.device.type != "cpu":
            offsets, values = _torch_block_top(block, excluded, k)
        else:
            array = _cpu_tensor_as_numpy(block) if _is_torch_tensor(block) else np.asarray(block)
            bound = float(best_scores[k - 1]) if len(best_scores) == k else None
            offsets, values = _numpy_block_top(array, excluded, k, bound, num_entities)
        keys = np.concatenate([best_keys, offsets + first * num_entities])
        scores = np.concatenate([best_scores, values])
        order = np.lexsort((keys, -scores))[:k]
        best_keys, best_scores = keys[order], scores[order]
    return TopPairs(heads=best_keys // num_entities, tails=best_keys % num_entities, scores=best_scores)


def top_pairs_by_relation(score_block: BlockScorer, relations: Iterable[int], num_entities: int, k: int, *,
                          block_size: int = 1024, known: Mapping[int, KnownPairs] | None = None
                          ) -> dict[int, TopPairs]:
    """:func:`top_pairs` of every relation; ``known`` from :func:`known_pairs_by_relation` (train + valid)."""
    known = known or {}
    return {int(r): top_pairs(score_block, int(r), num_entities, k, block_size=block_size, exclude=known.get(int(r)))
            for r in relations}


# ---------------------------------------------------------------------- metrics
def average_precision_at_k(relevance: np.ndarray, num_relevant: int, k: int) -> float:
    """AP@K = (1 / min(K, num_relevant)) * sum_{i<=K} P@i * rel_i for a 0/1 relevance vector (best first)."""
    if num_relevant < 1:
        raise ValueError("AP@K needs at least one relevant item")
    rel = np.asarray(relevance, dtype=np.float64)[:k]
    precision_at_i = np.cumsum(rel) / np.arange(1, len(rel) + 1)
    return float(np.dot(precision_at_i, rel) / min(k, num_relevant))


def pair_ranking_metrics(top: Mapping[int, TopPairs], relevant: Mapping[int, set[tuple[int, int]]], k: int
                         ) -> dict[str, Any]:
    """MAP@K, P@K, WMAP@K, WP@K (keys ``f"MAP@{k}"`` etc.) and ``per_relation``.

    ``per_relation[r]`` = {"AP@K": ..., "P@K": ..., "hits": ..., "num_relevant": |T_r|} (again with the number
    for K) for every relation with relevant pairs; ``num_relations`` counts them; ``missing`` lists those without
    a ranking in ``top`` (counted as empty rankings). Averages are NaN when no relation has relevant pairs.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    per_relation: dict[int, dict[str, float]] = {}
    missing: list[int] = []
    for relation in sorted(relevant):
        pairs = relevant[relation]
        if not pairs:
            continue
        ranked = top.get(relation)
        if ranked is None:
            missing.append(relation)
            relevance = np.zeros(0)
        else:
            relevance = np.array([(h, t) in pairs for h, t in ranked.pairs()[:k]], dtype=np.float64)
        hits = float(relevance.sum())
        per_relation[relation] = {f"AP@{k}": average_precision_at_k(relevance, len(pairs), k),
                                  f"P@{k}": hits / k, "hits": hits, "num_relevant": float(len(pairs))}
    ap = np.array([m[f"AP@{k}"] for m in per_relation.values()])
    precision = np.array([m[f"P@{k}"] for m in per_relation.values()])
    weights = np.array([m["num_relevant"] for m in per_relation.values()])
    nan = float("nan")
    return {
        f"MAP@{k}": float(ap.mean()) if len(ap) else nan,
        f"P@{k}": float(precision.mean()) if len(ap) else nan,
        f"WMAP@{k}": float(np.dot(weights, ap) / weights.sum()) if len(ap) else nan,
        f"WP@{k}": float(np.dot(weights, precision) / weights.sum()) if len(ap) else nan,
        "k": k,
        "num_relations": len(per_relation),
        "missing": missing,
        "per_relation": per_relation,
    }
