"""Micro, macro and PROBE values of one system on one label set, from its cached judged ranks. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.core import macro as macro_core
from evaluation.core import micro as micro_core
from evaluation.core import probe as probe_core
from evaluation.services.ranks import JudgedRanks
from pooling.engine.questions import Questions, Ragged

DEFAULT_HITS = (1, 3, 10)


def macro_measures(cutoff: int = 10, hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, str]:
    """Column name -> trec_eval measure name."""
    measures = {"macro_MRR": "recip_rank"}
    measures.update({f"macro_Hits@{k}": f"success_{k}" for k in hits})
    measures.update({f"macro_MAP@{cutoff}": f"map_cut_{cutoff}", f"macro_nDCG@{cutoff}": f"ndcg_cut_{cutoff}",
                     f"macro_P@{cutoff}": f"P_{cutoff}", "macro_bpref": "bpref", "macro_infAP": "infAP"})
    return measures


@dataclass(frozen=True)
class QuestionLabels:
    """A label set seen from the sample's questions (shared by every system)."""

    positives: Ragged
    negatives: Ragged
    extra_filter: Ragged  # (test answers + positives) - (train + valid answers): filtered for micro only

    @classmethod
    def build(cls, questions: Questions, positives: Ragged, negatives: Ragged, test_answers: Ragged,
              tv_filter: Ragged, num_entities: int) -> "QuestionLabels":
        rows = np.concatenate([test_answers.row_ids(), positives.row_ids()])
        values = np.concatenate([test_answers.values, positives.values])
        union = Ragged.from_pairs(rows, values, len(questions))
        keys = union.row_ids() * num_entities + union.values
        tv_keys = tv_filter.row_ids() * num_entities + tv_filter.values
        keep = ~np.isin(keys, tv_keys)
        extra = Ragged.from_pairs(union.row_ids()[keep], union.values[keep], len(questions))
        return cls(positives, negatives, extra)


@dataclass(frozen=True)
class MicroRanks:
    """Micro filtered ranks of every (question, positive answer) pair, in question order."""

    question: np.ndarray  # question rows
    answer: np.ndarray
    ranks: np.ndarray  # float64
    num_candidates: np.ndarray  # int64


def micro_ranks(jr: JudgedRanks, labels: QuestionLabels, policy: str = "realistic") -> MicroRanks:
    positives, extra = labels.positives, labels.extra_filter
    q_pos, a_pos = positives.row_ids(), positives.values
    pos_index = jr.lookup(q_pos, a_pos)
    greater = jr.greater[pos_index].copy()
    ties = jr.ties[pos_index].copy()
    num_candidates = jr.num_candidates[pos_index].copy()
    score_a = jr.score[pos_index]
    # cross join: every positive with every extra-filtered entity of its question
    extra_counts = extra.lengths
    per_positive = extra_counts[q_pos]
    if per_positive.sum():
        left = np.repeat(np.arange(a_pos.size), per_positive)
        first = np.repeat(extra.offsets[q_pos], per_positive)
        within = np.arange(left.size) - np.repeat(np.cumsum(per_positive) - per_positive, per_positive)
        other = extra.values[first + within]
        other_index = jr.lookup(q_pos[left], other)
        distinct = other != a_pos[left]
        s_other, s_a = jr.score[other_index], score_a[left]
        greater -= np.bincount(left, weights=(distinct & (s_other > s_a)), minlength=a_pos.size).astype(np.int64)
        ties -= np.bincount(left, weights=(distinct & (s_other == s_a)), minlength=a_pos.size).astype(np.int64)
        num_candidates -= np.bincount(left, weights=distinct, minlength=a_pos.size).astype(np.int64)
    g, t = greater.astype(np.float64), ties.astype(np.float64)
    if policy == "realistic":
        ranks = 1.0 + g + t / 2.0
    elif policy == "optimistic":
        ranks = 1.0 + g
    else:
        ranks = 1.0 + g + t
    return MicroRanks(q_pos, a_pos, ranks, num_candidates)


def micro_values(ranks: MicroRanks, hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, float]:
    return {f"micro_{name}": value for name, value in micro_core.micro_metrics(ranks.ranks, hits).items()}


def micro_per_answer(ranks: MicroRanks, hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, np.ndarray]:
    return {f"micro_{name}": values for name, values in micro_core.per_answer_values(ranks.ranks, hits).items()}


def macro_judged_ranking(jr: JudgedRanks, labels: QuestionLabels, policy: str = "realistic",
                         qids: list[str] | None = None) -> macro_core.JudgedRanking:
    """Relevant = positives, judged non-relevant = negatives; filter train + valid; unretrieved = rank inf."""
    pos, neg = labels.positives, labels.negatives
    pos_index = jr.lookup(pos.row_ids(), pos.values)
    neg_index = jr.lookup(neg.row_ids(), neg.values)
    pos_rank = np.where(jr.retrieved(pos_index), jr.ranks(pos_index, policy), np.inf)
    neg_rank = np.where(jr.retrieved(neg_index), jr.ranks(neg_index, policy), np.inf)
    num_ret = None if np.all(jr.num_retrieved < 0) else np.where(
        jr.num_retrieved < 0, np.iinfo(np.int64).max // 4, jr.num_retrieved)
    return macro_core.JudgedRanking.from_judged_ranks(
        len(pos), pos.row_ids(), pos_rank, neg.row_ids(), neg_rank, num_ret=num_ret,
        query_ids=qids,
    )


def macro_per_question(jr: JudgedRanks, labels: QuestionLabels, measures: dict[str, str],
                       policy: str = "realistic") -> dict[str, np.ndarray]:
    judged = macro_judged_ranking(jr, labels, policy)
    values = macro_core.evaluate(judged, list(measures.values()))
    return {column: values[name] for column, name in measures.items()}


@dataclass(frozen=True)
class ProbeInputs:
    """Popularity deltas of the micro queries of a label set (shared by the systems)."""

    entity_delta: np.ndarray
    relation_delta: np.ndarray


def probe_inputs(popularity: probe_core.TrainPopularity, ranks: MicroRanks, questions: Questions) -> ProbeInputs:
    entity_delta, relation_delta = popularity.query_deltas(ranks.answer, questions.relation[ranks.question])
    return ProbeInputs(entity_delta, relation_delta)
