"""Per-entry quantities shared by several macro measures, computed once per :func:`macro.evaluate` call."""
from __future__ import annotations

import numpy as np

from evaluation.core._util import segment_cumsum, segment_ids, segment_sum
from evaluation.core.judged_ranking import JudgedRanking


class MeasureContext:
    """Lazily computed arrays over the judged retrieved entries (CSR, see JudgedRanking) and per query."""

    def __init__(self, jr: JudgedRanking, num_docs_in_collection: int = 0) -> None:
        self.jr = jr
        self.n = jr.num_queries
        self.seg = segment_ids(jr.offsets)
        self.is_rel = jr.relevance >= jr.relevance_level
        self.num_rel_f = jr.num_rel.astype(np.float64)
        self.num_ret_f = jr.num_ret.astype(np.float64)
        self.num_docs_in_collection = num_docs_in_collection
        self._cache: dict[str, np.ndarray] = {}

    def get(self, key: str) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = getattr(self, "_" + key)()
        return self._cache[key]

    # ------------------------------------------------------------------ per entry
    def _rel_so_far(self) -> np.ndarray:  # relevant docs at or above each entry
        return segment_cumsum(self.is_rel.astype(np.int64), self.jr.offsets, self.seg)

    def _precision_at_rel(self) -> np.ndarray:  # precision at each relevant entry, 0 elsewhere
        return np.where(self.is_rel, self.get("rel_so_far") / self.jr.ranks, 0.0)

    def _is_nonrel(self) -> np.ndarray:  # judged non-relevant (0 <= rel < level)
        return (self.jr.relevance >= 0) & ~self.is_rel

    def _nonrel_so_far(self) -> np.ndarray:
        return segment_cumsum(self.get("is_nonrel").astype(np.int64), self.jr.offsets, self.seg)

    def _unjudged_so_far(self) -> np.ndarray:
        return segment_cumsum((self.jr.relevance < 0).astype(np.int64), self.jr.offsets, self.seg)

    def _gain_discounted(self) -> np.ndarray:
        gains = np.where(self.jr.relevance > 0, self.jr.relevance, 0).astype(np.float64)
        return gains / np.log2(self.jr.ranks + 1.0)

    def _ideal_discounted(self) -> np.ndarray:
        jr = self.jr
        ideal_seg = segment_ids(jr.ideal_offsets)
        position = np.arange(len(jr.ideal_gains)) - jr.ideal_offsets[ideal_seg]
        self._cache["ideal_position"] = position
        self._cache["ideal_seg"] = ideal_seg
        return jr.ideal_gains / np.log2(position + 2.0)

    # ------------------------------------------------------------------ per query
    def _first_rel_rank(self) -> np.ndarray:  # inf where nothing relevant was retrieved
        first = np.full(self.n, np.inf)
        rel_seg = self.seg[self.is_rel]
        if len(rel_seg):
            is_first = np.concatenate(([True], rel_seg[1:] != rel_seg[:-1]))
            first[rel_seg[is_first]] = self.jr.ranks[self.is_rel][is_first]
        return first

    def _num_rel_ret(self) -> np.ndarray:
        return segment_sum(self.is_rel.astype(np.float64), self.seg, self.n)

    def _num_judged_ret(self) -> np.ndarray:  # retrieved docs judged (rel >= 0), relevant or not
        return segment_sum((self.jr.relevance >= 0).astype(np.float64), self.seg, self.n)

    def _sum_precision_at_rel(self) -> np.ndarray:  # numerator of AP
        return segment_sum(self.get("precision_at_rel"), self.seg, self.n)

    # ------------------------------------------------------------------ helpers
    def divide_by_num_rel(self, totals: np.ndarray) -> np.ndarray:
        return np.divide(totals, self.num_rel_f, out=np.zeros(self.n), where=self.num_rel_f > 0)

    def hits_at(self, cutoff: np.ndarray | float) -> np.ndarray:
        """Relevant docs retrieved at ranks <= cutoff (a scalar or one cut-off per query)."""
        limit = cutoff[self.seg] if isinstance(cutoff, np.ndarray) else cutoff
        return segment_sum((self.is_rel & (self.jr.ranks <= limit)).astype(np.float64), self.seg, self.n)

    def ndcg(self, cutoff: int | None) -> np.ndarray:
        discounted = self.get("gain_discounted")
        ideal = self.get("ideal_discounted")
        if cutoff is not None:
            discounted = np.where(self.jr.ranks <= cutoff, discounted, 0.0)
            ideal = np.where(self._cache["ideal_position"] < cutoff, ideal, 0.0)
        dcg = segment_sum(discounted, self.seg, self.n)
        idcg = segment_sum(ideal, self._cache["ideal_seg"], self.n)
        # trec_eval leaves the (zero) DCG as is when the ideal DCG is zero.
        return np.divide(dcg, idcg, out=dcg.copy(), where=idcg > 0)
