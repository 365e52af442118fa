"""A pool as the judging orders see it (:class:`PoolView`: items and their system hits) and the judging state
(:class:`JudgingState`): the arrays shared by ``judging_order`` and ``cal_order``. Django-free."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class OrderError(ValueError):
    """An unknown order or inconsistent pool arrays."""


@dataclass(frozen=True)
class PoolView:
    """A pool as arrays. Hits are sorted by item; every item has at least one hit, or ``depth`` alone.

    ``question_group``: the question's relation category-and-side code (e.g. 2 * category + side), or any
    coarser grouping of questions; ``question_relation`` its relation; ``question_known``: how many answers the
    KG already knows for it (train + valid + test).
    """

    num_items: int
    num_systems: int
    num_questions: int
    hit_item: np.ndarray
    hit_system: np.ndarray
    hit_question: np.ndarray
    hit_rank: np.ndarray
    depth: np.ndarray  # (n,) smallest rank of any hit (or the pool's stored depth)
    question_relation: np.ndarray
    question_group: np.ndarray
    question_known: np.ndarray
    item_candidate: np.ndarray | None = None  # (n,) the candidate entity of each item (cal orders), optional
    item_features: np.ndarray | None = None  # (n, k) static KG features of the candidate (cal orders), optional

    @classmethod
    def build(cls, num_items: int, hit_item, hit_system, hit_question, hit_rank, *, num_systems: int | None = None,
              num_questions: int | None = None, depth=None, question_relation=None, question_group=None,
              question_known=None, item_candidate=None, item_features=None) -> "PoolView":
        hit_item = np.asarray(hit_item, dtype=np.int64)
        order = np.argsort(hit_item, kind="stable")
        hit_item = hit_item[order]
        hit_system = np.asarray(hit_system, dtype=np.int64)[order]
        hit_question = np.asarray(hit_question, dtype=np.int64)[order]
        hit_rank = np.asarray(hit_rank, dtype=np.int64)[order]
        if hit_item.size and (hit_item[0] < 0 or hit_item[-1] >= num_items):
            raise OrderError("a hit names an item outside 0..num_items-1")
        if np.any(hit_rank < 1):
            raise OrderError("hit ranks are 1-based")
        num_systems = int(num_systems if num_systems is not None else (hit_system.max() + 1 if hit_system.size else 0))
        num_questions = int(num_questions if num_questions is not None
                            else (hit_question.max() + 1 if hit_question.size else 0))
        best = np.full(num_items, np.iinfo(np.int64).max // 4, dtype=np.int64)
        np.minimum.at(best, hit_item, hit_rank)
        if depth is not None:
            given = np.asarray(depth, dtype=np.int64)
            best = np.where(best == np.iinfo(np.int64).max // 4, given, best)
        best = np.where(best == np.iinfo(np.int64).max // 4, 10**6, best)

        def per_question(values, default):
            if values is None:
                return np.full(num_questions, default, dtype=np.int64)
            values = np.asarray(values, dtype=np.int64)
            if values.shape != (num_questions,):
                raise OrderError(f"per-question arrays need {num_questions} values, got {values.shape}")
            return values

        def per_item(values, dtype):
            if values is None:
                return None
            values = np.asarray(values, dtype=dtype)
            if values.shape[0] != num_items:
                raise OrderError(f"per-item arrays need {num_items} rows, got {values.shape}")
            return values

        return cls(num_items, num_systems, num_questions, hit_item, hit_system, hit_question, hit_rank, best,
                   per_question(question_relation, 0), per_question(question_group, 0),
                   per_question(question_known, 0), per_item(item_candidate, np.int64),
                   per_item(item_features, np.float64))

    def subset(self, items: np.ndarray) -> "PoolView":
        """The view of ``items`` only (ascending old indices become 0..len-1), with their hits."""
        items = np.unique(np.asarray(items, dtype=np.int64))
        new_index = np.full(self.num_items, -1, dtype=np.int64)
        new_index[items] = np.arange(items.size)
        keep = new_index[self.hit_item] >= 0
        return PoolView(int(items.size), self.num_systems, self.num_questions, new_index[self.hit_item[keep]],
                        self.hit_system[keep], self.hit_question[keep], self.hit_rank[keep], self.depth[items],
                        self.question_relation, self.question_group, self.question_known,
                        None if self.item_candidate is None else self.item_candidate[items],
                        None if self.item_features is None else self.item_features[items])

    def items_without(self, systems: int | np.ndarray) -> np.ndarray:
        """Mask of the items the pool keeps without ``systems`` (leave-one-out): those another system retrieves,
        and those without any system hit (not attributable to anyone)."""
        drop = np.isin(self.hit_system, np.atleast_1d(systems))
        kept = np.ones(self.num_items, dtype=bool)
        kept[self.hit_item] = False
        kept[self.hit_item[~drop]] = True
        return kept

    @property
    def item_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """(items that have hits, offset of each one's first hit); kept on the view after the first call."""
        if "_blocks" not in self.__dict__:
            starts = np.flatnonzero(np.r_[True, self.hit_item[1:] != self.hit_item[:-1]]) if self.hit_item.size else (
                np.zeros(0, dtype=np.int64))
            self.__dict__["_blocks"] = (self.hit_item[starts], starts)
        return self.__dict__["_blocks"]

    @property
    def item_question(self) -> np.ndarray:
        """Each item's question: its best-ranked hit's (an item answering two questions takes the better rank)."""
        if "_question" not in self.__dict__:
            question = np.zeros(self.num_items, dtype=np.int64)
            if self.hit_item.size:
                items, starts = self.item_blocks
                by_rank = np.lexsort((self.hit_rank, self.hit_item))  # item blocks keep their offsets
                question[items] = self.hit_question[by_rank[starts]]
            self.__dict__["_question"] = question
        return self.__dict__["_question"]

    @property
    def hit_starts(self) -> np.ndarray:
        """Offsets of each item's first hit (items without hits repeat the next offset)."""
        return np.searchsorted(self.hit_item, np.arange(self.num_items))

    def systems_per_item(self) -> np.ndarray:
        if "_votes" not in self.__dict__:
            pairs = np.unique(self.hit_item * max(self.num_systems, 1) + self.hit_system)
            self.__dict__["_votes"] = np.bincount(pairs // max(self.num_systems, 1), minlength=self.num_items)
        return self.__dict__["_votes"]


@dataclass(frozen=True)
class JudgingState:
    """Which items have a final label and which of those are positive (both (n,) bool)."""

    judged: np.ndarray
    positive: np.ndarray

    @classmethod
    def empty(cls, num_items: int) -> "JudgingState":
        return cls(np.zeros(num_items, dtype=bool), np.zeros(num_items, dtype=bool))

    @classmethod
    def from_labels(cls, num_items: int, labels: dict[int, bool]) -> "JudgingState":
        """The state where exactly the items of ``labels`` (item -> positive) have a final label."""
        state = cls.empty(num_items)
        for item, label in labels.items():
            state.judged[item] = True
            state.positive[item] = label
        return state


def _dense_rank(values: np.ndarray) -> np.ndarray:
    """0 for the smallest value, equal values equal ranks (exact: no float mixing of keys)."""
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(values.shape)
