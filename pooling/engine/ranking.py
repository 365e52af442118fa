"""The filtered ranking engine: top-k candidates and filtered ranks (with ties) for many questions.

Django-free; PyTorch on CPU or CUDA. For each question q the *candidates* are all entities not in
``filter[q]``; for each *target* entity a of q (an answer or a judged entity) the engine counts, on the
very same score tensor that produced the top-k (SPEC 5.1):

* ``greater`` = #candidates other than a with score > s_a,
* ``ties``    = #candidates other than a with score == s_a,
* ``num_candidates`` = |E_q| = E - |filter[q] \\ {a}| (a always competes in its own ranking).

Scores are compared in the score function's precision, at least float32 (half / bfloat16 are upcast).
NaN scores are treated as -inf: they rank below every finite score and tie with -inf and each other.
Top-k ties are broken by the smaller entity id, so results are deterministic and independent of the
batch size and the device.

Entity blocks (issue 18): when a batch's (B, E) score tensor would exceed ``memory_budget`` bytes, a score
function that can score entities ``[start, stop)`` only (:class:`MatrixScores`, :class:`SparseScores` or any object
with a ``score_block(anchor, relation, side, start, stop)`` method, e.g. ``pooling.kge.model_score_fn``) is called
block by block: per block the filtered entries are masked, the block's exact top-k is merged into the running top-k
(same order: score descending, then smaller id) and greater / equal are counted for the targets, so memory is
O(B x block) and the results are the same as unblocked. A target's own score is only known once its block has been
scored: blocks before it are scored a second time to count them (stored scores give it at once).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Mapping, Union

import numpy as np
import torch

from .questions import HEAD, TAIL, Questions, Ragged

__all__ = [
    "ScoreFn",
    "BlockScoreFn",
    "MatrixScores",
    "SparseScores",
    "score_fn_from_matrix",
    "RankingResult",
    "TiePolicy",
    "rank",
]

#: (anchor ids (B,), relation ids (B,), side HEAD|TAIL) -> float scores (B, E), higher = more plausible.
#: The engine may modify the returned tensor in place, so return a fresh tensor, not a view of state.
ScoreFn = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]

#: (anchor ids (B,), relation ids (B,), side, start, stop) -> scores (B, stop - start) of entities start..stop-1,
#: equal to those columns of the full scores (the ``score_block`` method of a blocked score function).
BlockScoreFn = Callable[[torch.Tensor, torch.Tensor, int, int, int], torch.Tensor]

TiePolicy = Literal["realistic", "optimistic", "pessimistic"]

_NEG_INF = float("-inf")


class MatrixScores:
    """Precomputed scores, one row per question (imported systems: PyKEEN, LibKGE, run files...).

    ``rows`` are aligned with the ``questions`` later given to :func:`rank`, which then looks rows up by
    question index (no (anchor, relation, side) key needed). When ``questions`` is given here, the object
    is also a plain :data:`ScoreFn` that finds rows by question key, so it can rank any subset/order.
    """

    def __init__(self, scores: np.ndarray | torch.Tensor, questions: Questions | None = None) -> None:
        matrix = torch.as_tensor(scores)
        if matrix.ndim != 2:
            raise ValueError(f"score matrix must be 2-d (Q, E), got shape {tuple(matrix.shape)}")
        if not matrix.is_floating_point():
            matrix = matrix.to(torch.float32)
        if questions is not None and len(questions) != matrix.shape[0]:
            raise ValueError("score matrix needs one row per question")
        self.matrix = matrix
        self.questions = questions
        self._sorted_keys: np.ndarray | None = None
        self._key_order: np.ndarray | None = None

    @property
    def num_entities(self) -> int:
        return int(self.matrix.shape[1])

    def rows(self, question_indices: torch.Tensor, device: torch.device, start: int = 0,
             stop: int | None = None) -> torch.Tensor:
        """Fresh (B, stop - start) tensor of the given rows' columns start..stop-1 on ``device``."""
        index = question_indices.to(self.matrix.device)
        whole = start == 0 and (stop is None or stop >= self.num_entities)
        columns = self.matrix if whole else self.matrix[:, start:stop]  # a view
        # index_select always copies (only the selected block), so the engine may work on the result in place
        return columns.index_select(0, index).to(device, non_blocking=True)

    def values_at(self, rows: np.ndarray, entities: np.ndarray) -> torch.Tensor:
        """The scores of (row, entity) pairs, (n,)."""
        return self.matrix[torch.from_numpy(rows), torch.from_numpy(entities)]

    def __call__(self, anchor: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        return self.rows(self._row_index(anchor, relation, side), anchor.device)

    def score_block(self, anchor: torch.Tensor, relation: torch.Tensor, side: int, start: int, stop: int
                    ) -> torch.Tensor:
        return self.rows(self._row_index(anchor, relation, side), anchor.device, start, stop)

    def _row_index(self, anchor: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        if self.questions is None:
            raise TypeError("MatrixScores without questions can only be used through rank() by question index")
        num_relations = int(self.questions.relation.max()) + 1 if len(self.questions) else 1
        num_keys_entities = max(self.num_entities, int(self.questions.anchor.max()) + 1 if len(self.questions) else 1)
        if self._sorted_keys is None:
            keys = self.questions.keys(num_keys_entities, num_relations)
            self._key_order = np.argsort(keys, kind="stable")
            self._sorted_keys = keys[self._key_order]
        anchor_np = anchor.detach().cpu().numpy().astype(np.int64)
        relation_np = relation.detach().cpu().numpy().astype(np.int64)
        wanted = (np.int64(side) * num_relations + relation_np) * num_keys_entities + anchor_np
        position = np.searchsorted(self._sorted_keys, wanted)
        position = np.minimum(position, max(self._sorted_keys.size - 1, 0))
        if self._sorted_keys.size == 0 or np.any(self._sorted_keys[position] != wanted):
            raise KeyError("question not in the score matrix")
        return torch.from_numpy(self._key_order[position])


class SparseScores:
    """Scores of some entities per question, every other entity scoring ``fill`` (-inf: not retrieved, a TREC run).

    CSR rows aligned with the questions later given to :func:`rank` (``offsets`` (Q + 1,), ``entities`` sorted and
    unique inside each row, ``scores``); the engine asks for dense (B, block) tensors, built on demand, so a run over
    millions of entities is ranked in O(B x block) memory and never as a (Q, E) matrix.
    """

    questions = None  # rows are found by question index only

    def __init__(self, offsets: np.ndarray, entities: np.ndarray, scores: np.ndarray, num_entities: int,
                 fill: float = _NEG_INF) -> None:
        self.entries = Ragged(np.asarray(offsets, dtype=np.int64), np.asarray(entities, dtype=np.int64))
        values = np.asarray(scores)
        self.values = values if values.dtype.kind == "f" else values.astype(np.float32)
        self.scores = torch.from_numpy(self.values)
        self._num_entities = int(num_entities)
        self.fill = fill

    @property
    def num_entities(self) -> int:
        return self._num_entities

    @property
    def dtype(self) -> torch.dtype:
        return self.scores.dtype

    def rows(self, question_indices: torch.Tensor, device: torch.device, start: int = 0,
             stop: int | None = None) -> torch.Tensor:
        stop = self._num_entities if stop is None else stop
        index = question_indices.cpu().numpy()
        local_rows, entities, positions = _csr_slice(self.entries, index)
        inside = (entities >= start) & (entities < stop)
        # numpy (not torch.full): its allocations are visible to tracemalloc, so tests can bound the memory
        block = np.full((index.size, stop - start), self.fill, dtype=self.values.dtype)
        block[local_rows[inside], entities[inside] - start] = self.values[positions[inside]]
        return torch.from_numpy(block).to(device)

    def values_at(self, rows: np.ndarray, entities: np.ndarray) -> torch.Tensor:
        """The scores of (row, entity) pairs (``fill`` where the row has no entry for the entity)."""
        keys = self.entries.row_ids() * self._num_entities + self.entries.values  # sorted
        wanted = np.asarray(rows, dtype=np.int64) * self._num_entities + np.asarray(entities, dtype=np.int64)
        result = torch.full((wanted.size,), self.fill, dtype=self.scores.dtype)
        if keys.size:
            position = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
            found = keys[position] == wanted
            result[torch.from_numpy(found)] = self.scores[torch.from_numpy(position[found])]
        return result


def score_fn_from_matrix(scores: np.ndarray | torch.Tensor, questions: Questions | None = None) -> MatrixScores:
    """Adapter for precomputed (Q, E) score matrices; see :class:`MatrixScores`."""
    return MatrixScores(scores, questions)


@dataclass(frozen=True)
class RankingResult:
    """Top-k lists per question and rank statistics per (question, target) pair."""

    topk_entities: np.ndarray  # int64 (Q, k), -1 where fewer than k candidates
    topk_scores: np.ndarray  # float32 (Q, k), NaN where fewer than k candidates
    targets: Ragged  # the targets whose ranks were computed, rows aligned with the questions
    greater: np.ndarray  # int64 (nnz,), candidates (other than a) scored above a
    ties: np.ndarray  # int64 (nnz,), candidates (other than a) scored equal to a
    num_candidates: np.ndarray  # int64 (nnz,), |E_q| including a

    @property
    def k(self) -> int:
        return int(self.topk_entities.shape[1])

    def ranks(self, policy: TiePolicy = "realistic") -> np.ndarray:
        """Filtered ranks (float64, (nnz,)): realistic 1 + greater + ties/2 (SPEC 5.1), optimistic, pessimistic."""
        greater = self.greater.astype(np.float64)
        if policy == "realistic":
            return 1.0 + greater + self.ties / 2.0
        if policy == "optimistic":
            return 1.0 + greater
        if policy == "pessimistic":
            return 1.0 + greater + self.ties
        raise ValueError(f"unknown tie policy {policy!r}")

    def target_questions(self) -> np.ndarray:
        """For each target, the index of its question (int64, (nnz,))."""
        return self.targets.row_ids()

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain named arrays (the .npz layout), for storage writers."""
        return {
            "topk_entities": self.topk_entities,
            "topk_scores": self.topk_scores,
            "target_offsets": self.targets.offsets,
            "target_values": self.targets.values,
            "greater": self.greater,
            "ties": self.ties,
            "num_candidates": self.num_candidates,
        }

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray]) -> "RankingResult":
        return cls(
            topk_entities=data["topk_entities"],
            topk_scores=data["topk_scores"],
            targets=Ragged(data["target_offsets"], data["target_values"]),
            greater=data["greater"],
            ties=data["ties"],
            num_candidates=data["num_candidates"],
        )

    def save(self, path: str | Path) -> None:
        """One compressed .npz, plain arrays only (loadable without pickle)."""
        np.savez_compressed(path, **self.to_arrays())

    @classmethod
    def load(cls, path: str | Path) -> "RankingResult":
        with np.load(path, allow_pickle=False) as data:
            return cls.from_arrays({name: data[name] for name in data.files})


# ----------------------------------------------------------------------------------------------------
# helpers


def _canonical(sets: Ragged, num_rows: int, num_entities: int, name: str) -> Ragged:
    """Sorted, deduplicated rows; validates shape and id range."""
    if len(sets) != num_rows:
        raise ValueError(f"{name} has {len(sets)} rows, expected one per question ({num_rows})")
    if sets.nnz and (sets.values.min() < 0 or sets.values.max() >= num_entities):
        raise ValueError(f"{name} contains entity ids outside 0..{num_entities - 1}")
    lengths = sets.lengths
    values = sets.values
    if values.size:
        row_ids = sets.row_ids()
        same_row = row_ids[1:] == row_ids[:-1]
        if np.all(values[1:][same_row] > values[:-1][same_row]):
            return sets  # already strictly increasing inside each row
    return Ragged.from_pairs(sets.row_ids(), values, len(lengths))


def _membership(targets: Ragged, sorted_sets: Ragged, num_entities: int) -> np.ndarray:
    """For each target value, whether it is in the same row of ``sorted_sets`` (rows sorted, unique)."""
    set_keys = sorted_sets.row_ids() * num_entities + sorted_sets.values  # globally sorted
    target_keys = targets.row_ids() * num_entities + targets.values
    if set_keys.size == 0:
        return np.zeros(target_keys.size, dtype=bool)
    position = np.minimum(np.searchsorted(set_keys, target_keys), set_keys.size - 1)
    return set_keys[position] == target_keys


def _csr_slice(sets: Ragged, question_index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(local row, value, global position) of every entry of the given rows, for one batch."""
    starts = sets.offsets[question_index]
    lengths = sets.offsets[question_index + 1] - starts
    total = int(lengths.sum())
    local_rows = np.repeat(np.arange(question_index.size, dtype=np.int64), lengths)
    first = np.zeros(question_index.size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    positions = np.repeat(starts - first, lengths) + np.arange(total, dtype=np.int64)
    return local_rows, sets.values[positions], positions


def _batches(sides: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Question indices in chunks of at most ``batch_size``, each chunk of one side (one ScoreFn call)."""
    chunks: list[np.ndarray] = []
    for side in (HEAD, TAIL):
        indices = np.flatnonzero(sides == side)
        for start in range(0, indices.size, batch_size):
            chunks.append(indices[start : start + batch_size])
    return chunks


def _count_greater_equal(
    scores: torch.Tensor, local_rows: torch.Tensor, thresholds: torch.Tensor, chunk_rows: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """For each (row, threshold): #entries > threshold and #entries == threshold in ``scores[row]``.

    ``local_rows`` must be non-decreasing (targets come grouped by question).
    """
    if scores.device.type == "cpu":
        greater_np, equal_np = _count_cpu(scores.numpy(), local_rows.numpy(), thresholds.numpy())
        return torch.from_numpy(greater_np), torch.from_numpy(equal_np)
    greater = torch.empty(local_rows.numel(), dtype=torch.int64, device=scores.device)
    equal = torch.empty_like(greater)
    for start in range(0, local_rows.numel(), chunk_rows):
        stop = start + chunk_rows
        block = scores.index_select(0, local_rows[start:stop])
        threshold = thresholds[start:stop, None]
        # int32 sums: a bool tensor's plain sum first copies it to int64 (measured 1.5x slower on an H100)
        greater[start:stop] = (block > threshold).sum(dim=1, dtype=torch.int32)
        equal[start:stop] = (block == threshold).sum(dim=1, dtype=torch.int32)
    return greater, equal


# A row with this many targets is sorted once instead of compared twice per target: a sort costs about as much as
# 13-16 whole-row compares (numpy, 163,508 entities). Evaluation rows (test answers + every judged pool entry of the
# question, about 20) took 45% of an evaluation's time in compares before.
_SORT_FROM_TARGETS = 8


def _count_cpu(matrix: np.ndarray, rows: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """numpy version: gathering rows costs more than comparing them, so never copy a row.

    Slot j = the j-th target of each question. While most rows of the batch have a j-th target, one
    vectorised compare over the whole batch serves them all; leftover targets are counted on row views,
    or by binary search in the sorted row when a row has many of them (such a row takes no slot at all).
    """
    num_rows, num_entities = matrix.shape
    greater = np.empty(rows.size, dtype=np.int64)
    equal = np.empty(rows.size, dtype=np.int64)
    counts = np.bincount(rows, minlength=num_rows)
    first = np.zeros(num_rows, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    slot = np.arange(rows.size, dtype=np.int64) - first[rows]
    slot[counts[rows] >= _SORT_FROM_TARGETS] = -1  # counted on the sorted row, below
    mask = np.empty(matrix.shape, dtype=bool)
    done = np.zeros(rows.size, dtype=bool)
    for j in range(int(counts.max(initial=0))):
        in_slot = np.flatnonzero(slot == j)
        if in_slot.size * 3 < num_rows:
            break
        threshold = np.full((num_rows, 1), np.nan, dtype=matrix.dtype)  # NaN: no target, result unused
        threshold[rows[in_slot], 0] = thresholds[in_slot]
        np.greater(matrix, threshold, out=mask)
        greater[in_slot] = mask.view(np.uint8).sum(axis=1, dtype=np.int64)[rows[in_slot]]
        np.equal(matrix, threshold, out=mask)
        equal[in_slot] = mask.view(np.uint8).sum(axis=1, dtype=np.int64)[rows[in_slot]]
        done[in_slot] = True
    leftover = np.flatnonzero(~done)
    if leftover.size:
        leftover_rows, leftover_counts = np.unique(rows[leftover], return_counts=True)
        position = 0
        for row, count in zip(leftover_rows.tolist(), leftover_counts.tolist()):
            targets = leftover[position : position + count]
            position += count
            values = matrix[row]
            if count >= _SORT_FROM_TARGETS:
                ordered = np.sort(values)  # NaN sorts last and is never > or == a threshold
                valid = num_entities - int(np.count_nonzero(np.isnan(ordered)))
                ordered = ordered[:valid]
                below_or_equal = np.searchsorted(ordered, thresholds[targets], side="right")
                below = np.searchsorted(ordered, thresholds[targets], side="left")
                greater[targets] = valid - below_or_equal
                equal[targets] = below_or_equal - below
            else:
                for target in targets.tolist():
                    greater[target] = np.count_nonzero(values > thresholds[target])
                    equal[target] = np.count_nonzero(values == thresholds[target])
    return greater, equal


def _order_topk(values: torch.Tensor, entities: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort small (B, k) lists by score descending, ties by smaller entity id (two stable sorts)."""
    by_id = torch.argsort(entities, dim=1, stable=True)
    entities = entities.gather(1, by_id)
    values = values.gather(1, by_id)
    by_score = torch.argsort(values, dim=1, descending=True, stable=True)
    return values.gather(1, by_score), entities.gather(1, by_score)


def _exact_topk(
    scores: torch.Tensor, candidate: torch.Tensor, kth_value: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k of rows with boundary ties or -inf candidates: exact, ties by smaller id, -1/NaN padding.

    ``candidate`` marks candidates; ``kth_value`` is the k-th largest value with filtered entries at -inf.
    """
    num_rows = scores.shape[0]
    above = candidate & (scores > kth_value[:, None])
    at = candidate & (scores == kth_value[:, None])
    free_slots = k - above.sum(dim=1, keepdim=True)
    # among entities tied at the boundary keep the smallest ids (cumsum follows id order)
    selected = above | (at & (at.cumsum(dim=1) <= free_slots))
    row, entity = selected.nonzero(as_tuple=True)  # row-major, so ids ascend inside a row
    counts = selected.sum(dim=1)
    first = torch.cumsum(counts, 0) - counts
    slot = torch.arange(row.numel(), device=scores.device) - first[row]
    entities = torch.full((num_rows, k), -1, dtype=torch.int64, device=scores.device)
    values = torch.full((num_rows, k), _NEG_INF, dtype=scores.dtype, device=scores.device)
    entities[row, slot] = entity
    values[row, slot] = scores[row, entity]
    # score descending (stable keeps ascending ids), then padding last
    by_score = torch.argsort(values, dim=1, descending=True, stable=True)
    values, entities = values.gather(1, by_score), entities.gather(1, by_score)
    padding = (entities < 0).to(torch.uint8)
    padding_last = torch.argsort(padding, dim=1, stable=True)
    values, entities = values.gather(1, padding_last), entities.gather(1, padding_last)
    values = values.masked_fill(entities < 0, float("nan"))
    return values, entities


def _topk(
    scores: torch.Tensor, filter_rows: torch.Tensor, filter_entities: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Deterministic top-k of ``scores`` (filtered entries already -inf); None if a row holds a NaN."""
    num_rows, num_entities = scores.shape
    depth = min(k + 1, num_entities)  # one extra to see whether the k-th place is tied
    values, entities = torch.topk(scores, depth, dim=1, largest=True, sorted=True)
    if bool(torch.isnan(values[:, 0]).any()):
        return None  # topk ranks NaN above everything, so any NaN in a row surfaces in its first slot
    keep = min(k, num_entities)
    kth_value = values[:, keep - 1]
    clear = kth_value > _NEG_INF  # -inf at the boundary may mix candidates and filtered entries
    if depth > k:
        clear &= values[:, k] < kth_value
    values, entities = _order_topk(values[:, :keep], entities[:, :keep])
    if keep < k:
        pad = k - keep
        values = torch.cat([values, values.new_full((num_rows, pad), float("nan"))], dim=1)
        entities = torch.cat([entities, entities.new_full((num_rows, pad), -1)], dim=1)
    if not bool(clear.all()):
        ambiguous = (~clear).nonzero(as_tuple=True)[0]
        candidate = torch.ones((ambiguous.numel(), num_entities), dtype=torch.bool, device=scores.device)
        # local position of each ambiguous row, -1 for the others
        position = torch.full((num_rows,), -1, dtype=torch.int64, device=scores.device)
        position[ambiguous] = torch.arange(ambiguous.numel(), device=scores.device)
        in_ambiguous = position[filter_rows] >= 0
        candidate[position[filter_rows[in_ambiguous]], filter_entities[in_ambiguous]] = False
        exact_values, exact_entities = _exact_topk(scores[ambiguous], candidate, kth_value[ambiguous], k)
        values[ambiguous] = exact_values
        entities[ambiguous] = exact_entities
    return values, entities


# ----------------------------------------------------------------------------------------------------
# entity blocks

#: Automatic blocks are at least this wide: narrower products take other BLAS kernels, whose last bits may differ
#: from the full product's (seen below 16 columns on the CPU), and per-block overheads would dominate.
MIN_AUTO_BLOCK = 4096


def entity_block_size(num_rows: int, num_entities: int, memory_budget: int, itemsize: int = 4) -> int | None:
    """Entities per block so that a (num_rows, block) score tensor takes at most ``memory_budget`` bytes; None when
    the whole (num_rows, num_entities) tensor fits. Blocks are balanced (the last is not a narrow remainder)."""
    if num_rows * num_entities * itemsize <= memory_budget:
        return None
    width = memory_budget // max(1, itemsize * num_rows)
    if width >= num_entities:
        return None
    # as many blocks as the budget needs (fewer when that would make them narrower than the minimum)
    blocks = -(-num_entities // max(width, 1))
    if -(-num_entities // blocks) < MIN_AUTO_BLOCK:
        blocks = max(1, num_entities // MIN_AUTO_BLOCK)
    return -(-num_entities // blocks) if blocks > 1 else None


def _checked(scores: torch.Tensor, shape: tuple[int, int], device: torch.device) -> torch.Tensor:
    """The score function's output on ``device``, at least float32, contiguous, detached."""
    if tuple(scores.shape) != shape:
        raise ValueError(f"score function returned {tuple(scores.shape)}, expected {shape}")
    if scores.device != device:
        scores = scores.to(device)
    if not scores.is_floating_point() or scores.element_size() < 4:
        scores = scores.to(torch.float32)  # ties must be detected in at least float32
    return scores.detach().contiguous()


def _without_nan(scores: torch.Tensor) -> torch.Tensor:
    """NaN -> -inf in place (the engine's reading of NaN), only when there is one."""
    if bool(torch.isnan(scores).any()):
        torch.nan_to_num_(scores, nan=_NEG_INF, posinf=math.inf, neginf=_NEG_INF)
    return scores


def _merge_topk(values: torch.Tensor, entities: torch.Tensor, more_values: torch.Tensor,
                more_entities: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k first of two exact top-k lists of disjoint entities: score descending, then smaller id, padding
    (-1 / NaN) last: the order of :func:`_topk`."""
    entities = torch.cat([entities, more_entities], dim=1)
    padding = entities < 0
    values = torch.cat([values, more_values], dim=1).masked_fill(padding, _NEG_INF)
    ids = entities.masked_fill(padding, torch.iinfo(torch.int64).max)  # padding after any -inf candidate
    by_id = torch.argsort(ids, dim=1, stable=True)
    values, entities = values.gather(1, by_id), entities.gather(1, by_id)
    by_score = torch.argsort(values, dim=1, descending=True, stable=True)[:, :k]
    values, entities = values.gather(1, by_score), entities.gather(1, by_score)
    return values.masked_fill(entities < 0, float("nan")), entities


def _rank_full(fetch: Callable[[int, int], torch.Tensor], num_rows: int, num_entities: int, k: int,
               filter_rows: torch.Tensor, filter_entities: torch.Tensor, target_rows: torch.Tensor,
               target_entities: torch.Tensor, chunk_rows: int):
    """One batch on its whole (B, E) score tensor: (top values, top entities, target scores, greater, equal)."""
    device = filter_rows.device
    scores = _checked(fetch(0, num_entities), (num_rows, num_entities), device)
    # the targets' own scores, read from the same tensor before filtering (a target may be filtered)
    target_scores = scores[target_rows, target_entities]
    has_nan = bool(torch.isnan(target_scores).any())
    scores.index_put_((filter_rows, filter_entities), scores.new_tensor(_NEG_INF))
    top = None if has_nan else _topk(scores, filter_rows, filter_entities, k)
    if top is None:  # rare: sanitise NaN -> -inf once, then redo (keeps the common path pass-free)
        torch.nan_to_num_(scores, nan=_NEG_INF, posinf=math.inf, neginf=_NEG_INF)
        target_scores = torch.nan_to_num(target_scores, nan=_NEG_INF, posinf=math.inf, neginf=_NEG_INF)
        top = _topk(scores, filter_rows, filter_entities, k)
        assert top is not None
    values, entities = top
    greater = equal = None
    if target_rows.numel():
        greater, equal = _count_greater_equal(scores, target_rows, target_scores, chunk_rows)
    return values, entities, target_scores, greater, equal


def _rank_blocked(fetch: Callable[[int, int], torch.Tensor], num_rows: int, num_entities: int, block: int, k: int,
                  filter_rows: torch.Tensor, filter_entities: torch.Tensor, target_rows: torch.Tensor,
                  target_entities: torch.Tensor, chunk_rows: int, target_scores: torch.Tensor | None):
    """One batch, entities ``block`` at a time: the same five results as :func:`_rank_full`.

    ``target_scores``: the targets' scores when known beforehand (NaN already -inf), else read from their blocks,
    and the blocks before a target's scored again to count them."""
    device = filter_rows.device
    bounds = [(start, min(start + block, num_entities)) for start in range(0, num_entities, block)]
    # the filter entries of each block: one stable sort by block, then contiguous ranges
    filter_block = filter_entities // block
    filter_order = torch.argsort(filter_block, stable=True)
    filter_cuts = torch.searchsorted(filter_block[filter_order],
                                     torch.arange(len(bounds) + 1, device=device)).tolist()
    target_block = target_entities // block
    known = target_scores is not None
    greater = torch.zeros(target_rows.numel(), dtype=torch.int64, device=device)
    equal = torch.zeros_like(greater)

    had_nan = [False] * len(bounds)  # blocks whose candidates held a NaN (found by _topk: no extra pass)

    def masked_block(index: int, read: torch.Tensor | None) -> torch.Tensor:
        """Scores of block ``index`` with filtered entries at -inf (and NaN -> -inf where the first pass found
        one); first the scores of the targets ``read`` (a mask) are copied out, NaN -> -inf (a target may be
        filtered)."""
        nonlocal target_scores
        start, stop = bounds[index]
        scores = _checked(fetch(start, stop), (num_rows, stop - start), device)
        if read is not None and bool(read.any()):
            if target_scores is None:
                target_scores = torch.empty(target_rows.numel(), dtype=scores.dtype, device=device)
            read_scores = scores[target_rows[read], target_entities[read] - start]
            target_scores[read] = torch.nan_to_num(read_scores, nan=_NEG_INF, posinf=math.inf, neginf=_NEG_INF)
        chosen = filter_order[filter_cuts[index]:filter_cuts[index + 1]]
        scores.index_put_((filter_rows[chosen], filter_entities[chosen] - start), scores.new_tensor(_NEG_INF))
        return _without_nan(scores) if had_nan[index] else scores

    def count(scores: torch.Tensor, which: torch.Tensor) -> None:
        if bool(which.any()):
            block_greater, block_equal = _count_greater_equal(scores, target_rows[which], target_scores[which],
                                                              chunk_rows)
            greater[which] += block_greater.to(device)
            equal[which] += block_equal.to(device)

    values = torch.full((num_rows, k), float("nan"), device=device)
    entities = torch.full((num_rows, k), -1, dtype=torch.int64, device=device)
    for index, (start, stop) in enumerate(bounds):
        scores = masked_block(index, None if known else target_block == index)
        chosen = filter_order[filter_cuts[index]:filter_cuts[index + 1]]
        top = _topk(scores, filter_rows[chosen], filter_entities[chosen] - start, k)
        if top is None:  # rare: a candidate scored NaN; -inf for it, then again (as _rank_full)
            had_nan[index] = True
            top = _topk(_without_nan(scores), filter_rows[chosen], filter_entities[chosen] - start, k)
            assert top is not None
        block_values, block_entities = top
        block_entities = torch.where(block_entities >= 0, block_entities + start, block_entities)
        if index == 0:
            values, entities = block_values, block_entities
        else:
            values, entities = _merge_topk(values, entities, block_values.to(values.dtype), block_entities, k)
        if target_rows.numel():
            count(scores, torch.ones_like(target_block, dtype=torch.bool) if known else target_block <= index)
    if not known and target_rows.numel():
        for index in range(int(target_block.max())):  # blocks before a target's own, again
            count(masked_block(index, None), target_block > index)
    if target_scores is None:
        target_scores = torch.empty(0, device=device)
    return values, entities, target_scores, greater, equal


# ----------------------------------------------------------------------------------------------------
# the engine


def rank(
    score_fn: ScoreFn | MatrixScores,
    questions: Questions,
    *,
    num_entities: int,
    filter: Ragged,  # noqa: A002 - the protocol's own word
    targets: Ragged | None = None,
    k: int = 10,
    batch_size: int = 1024,
    device: Union[str, torch.device, None] = None,
    progress: Callable[[int, int], None] | None = None,
    memory_budget: int | None = None,
    entity_block: int | None = None,
) -> RankingResult:
    """Filtered top-k and target ranks for every question (see the module docstring for semantics).

    ``score_fn`` is a :data:`ScoreFn` (e.g. ``model.score_questions``) or a :class:`MatrixScores` /
    :class:`SparseScores` whose rows align with ``questions``. Work is done ``batch_size`` questions at a time,
    one side per call; only the batch's filter / target entries are moved to ``device`` and the -inf mask is
    scattered there.

    ``memory_budget`` (bytes): the most one batch's score tensor may take. Above it, a score function with a
    ``score_block`` method (and a :class:`MatrixScores`) is called on entity blocks that fit (at least
    :data:`MIN_AUTO_BLOCK` wide); any other one on fewer questions at a time. ``entity_block`` forces blocks of
    that many entities (tests). Results are the same either way.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if entity_block is not None and entity_block < 1:
        raise ValueError("entity_block must be >= 1")
    num_questions = len(questions)
    device = torch.device(device) if device is not None else torch.device("cpu")
    filter_sets = _canonical(filter, num_questions, num_entities, "filter")
    if targets is None:
        targets = Ragged.empty(num_questions)
    if len(targets) != num_questions:
        raise ValueError(f"targets has {len(targets)} rows, expected {num_questions}")
    if targets.nnz and (targets.values.min() < 0 or targets.values.max() >= num_entities):
        raise ValueError(f"targets contain entity ids outside 0..{num_entities - 1}")
    use_rows = isinstance(score_fn, (MatrixScores, SparseScores)) and score_fn.questions is None
    if isinstance(score_fn, SparseScores) and len(score_fn.entries) != num_questions:
        raise ValueError("sparse scores need one row per question")
    if use_rows and isinstance(score_fn, MatrixScores) and score_fn.matrix.shape[0] != num_questions:
        raise ValueError("score matrix needs one row per question")
    score_block = getattr(score_fn, "score_block", None)
    if entity_block is not None and not use_rows and score_block is None:
        raise TypeError("entity blocks need a MatrixScores or a score function with a score_block method")
    if entity_block is None and memory_budget is not None:
        # the blocks of stored scores keep their dtype (float64: 8 bytes), by question index or by key alike
        stored = (score_fn.matrix if isinstance(score_fn, MatrixScores)
                  else score_fn.scores if isinstance(score_fn, SparseScores) else None)
        itemsize = 4 if stored is None else max(4, stored.element_size())
        rows = max(1, min(batch_size, num_questions))
        if use_rows or score_block is not None:
            entity_block = entity_block_size(rows, num_entities, memory_budget, itemsize)
        else:
            batch_size = max(1, min(batch_size, memory_budget // max(1, itemsize * num_entities)))
    if entity_block is not None and entity_block >= num_entities:
        entity_block = None

    target_in_filter = _membership(targets, filter_sets, num_entities)
    filter_sizes = filter_sets.lengths
    num_candidates = num_entities - filter_sizes[targets.row_ids()] + target_in_filter

    topk_entities = np.full((num_questions, k), -1, dtype=np.int64)
    topk_scores = np.full((num_questions, k), np.nan, dtype=np.float32)
    greater = np.zeros(targets.nnz, dtype=np.int64)
    ties = np.zeros(targets.nnz, dtype=np.int64)

    done = 0
    for question_index in _batches(questions.side, batch_size):
        side = int(questions.side[question_index[0]])
        index_tensor = torch.from_numpy(question_index)
        if use_rows:
            def fetch(start: int, stop: int) -> torch.Tensor:
                return score_fn.rows(index_tensor, device, start, stop)  # type: ignore[union-attr]
        else:
            anchor = torch.from_numpy(questions.anchor[question_index]).to(device)
            relation = torch.from_numpy(questions.relation[question_index]).to(device)

            def fetch(start: int, stop: int) -> torch.Tensor:
                if start == 0 and stop == num_entities:
                    return score_fn(anchor, relation, side)
                return score_block(anchor, relation, side, start, stop)  # type: ignore[misc]

        filter_rows_np, filter_entities_np, _ = _csr_slice(filter_sets, question_index)
        target_rows_np, target_entities_np, target_positions = _csr_slice(targets, question_index)
        filter_rows = torch.from_numpy(filter_rows_np).to(device)
        filter_entities = torch.from_numpy(filter_entities_np).to(device)
        target_rows = torch.from_numpy(target_rows_np).to(device)
        target_entities = torch.from_numpy(target_entities_np).to(device)

        if entity_block is None:
            values, entities, target_scores, batch_greater, batch_equal = _rank_full(
                fetch, question_index.size, num_entities, k, filter_rows, filter_entities, target_rows,
                target_entities, batch_size)
        else:
            known = None
            if use_rows:  # stored scores give the targets' scores at once: one pass over the blocks
                known = score_fn.values_at(question_index[target_rows_np], target_entities_np)  # type: ignore
                known = _without_nan(_checked(known[None, :], (1, known.numel()), device)[0].clone())
            values, entities, target_scores, batch_greater, batch_equal = _rank_blocked(
                fetch, question_index.size, num_entities, entity_block, k, filter_rows, filter_entities,
                target_rows, target_entities, batch_size, known)
        topk_entities[question_index] = entities.cpu().numpy()
        topk_scores[question_index] = values.to(torch.float32).cpu().numpy()

        if target_rows.numel():
            batch_greater = batch_greater.cpu().numpy()
            batch_equal = batch_equal.cpu().numpy()
            in_filter = target_in_filter[target_positions]
            # a's own entry equals s_a unless a is filtered (then it is -inf); at s_a = -inf every
            # filtered entry (-inf) also matched
            batch_ties = batch_equal - (~in_filter)
            at_minus_inf = (target_scores == _NEG_INF).cpu().numpy()
            if at_minus_inf.any():
                batch_ties[at_minus_inf] -= filter_sizes[question_index[target_rows_np[at_minus_inf]]]
            greater[target_positions] = batch_greater
            ties[target_positions] = batch_ties
        done += question_index.size
        if progress is not None:
            progress(done, num_questions)

    return RankingResult(
        topk_entities=topk_entities,
        topk_scores=topk_scores,
        targets=targets,
        greater=greater,
        ties=ties,
        num_candidates=num_candidates.astype(np.int64),
    )
