"""Micro, macro and PROBE values of one system on one label set, from its cached judged ranks. Torch-free.

The questions of a label set are those with at least one positive answer (``QuestionLabels.evaluated``): for the
sparse labels the sample's questions, for the completed labels also the other side of every positive pool triple
(``pooling.selectors.questions``), exactly the questions of the campaign's questions / qrels export.

- micro (SPEC 5.2): one ranking per (question, positive answer), i.e. the head and the tail ranking of every
  positive triple (2|T|), filter train + valid + test + the label set's positives;
- macro (SPEC 5.3): mean over the label set's questions, filter train + valid, trec_eval semantics (an entity the
  system did not score -- outside a run -- is not retrieved).

Where a metric family plugs into the report: a family computed from the micro ranks (``MicroRanks``: ranks,
candidate counts, question and answer of each ranking) adds its columns in :func:`micro_values` (one value per
system and label set) and, when it has per-answer values for the significance tests, in :func:`micro_per_answer`;
a question-wise family adds trec_eval measure names in :func:`macro_measures`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.core import macro as macro_core
from evaluation.core import micro as micro_core
from evaluation.core import probe as probe_core
from evaluation.core import rank_family as family_core
from evaluation.services.ranks import JudgedRanks
from pooling.engine.questions import Questions, Ragged

DEFAULT_HITS = (1, 3, 10)


def macro_measures(cutoff: int = 10, hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, str]:
    """Column name -> trec_eval measure name."""
    measures = {"macro_MRR": "recip_rank", "macro_MR": "MR"}  # MR: rank of the first answer (core/macro_rank.py)
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
    evaluated: np.ndarray  # rows of the label set's questions: those with at least one positive answer

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
        return cls(positives, negatives, extra, np.flatnonzero(positives.lengths > 0))


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
    """micro_MR, micro_MRR, micro_Hits@K, then PyKEEN's rank family from the candidate counts (micro_AMR,
    micro_AMRI, micro_zMR, ..., :func:`family_columns`); NaN without rankings. The ranks follow the tie policy
    they were computed with."""
    values = micro_core.micro_metrics(ranks.ranks, hits)
    family = family_core.rank_family(ranks.ranks, ranks.num_candidates, hits)
    values.update({name: family[name] for name in family_core.added_names(hits)})
    return {f"micro_{name}": value for name, value in values.items()}


def family_columns(hits: tuple[int, ...] = DEFAULT_HITS) -> list[str]:
    """The rank-family columns of :func:`micro_values` beyond micro MR / MRR / Hits@K (for reports to group)."""
    return [f"micro_{name}" for name in family_core.added_names(hits)]


def micro_reweighted_values(ranks: MicroRanks, relation: np.ndarray, relation_weights: np.ndarray,
                            hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, float]:
    """:func:`micro_values` with relation p's rankings weighted w_p / (its number of rankings), SPEC 5.2.

    ``relation`` is the relation id of every ranking; ValueError as :func:`evaluation.core.micro.reweighted`."""
    values = micro_core.reweighted(ranks.ranks, relation, relation_weights, hits)
    weights = family_core.per_ranking_weights(relation, relation_weights)
    family = family_core.rank_family(ranks.ranks, ranks.num_candidates, hits, weights)
    values.update({name: family[name] for name in family_core.added_names(hits)})
    return {f"micro_{name}": value for name, value in values.items()}


def micro_per_answer(ranks: MicroRanks, hits: tuple[int, ...] = DEFAULT_HITS) -> dict[str, np.ndarray]:
    return {f"micro_{name}": values for name, values in micro_core.per_answer_values(ranks.ranks, hits).items()}


def macro_judged_ranking(jr: JudgedRanks, labels: QuestionLabels, policy: str = "realistic",
                         qids: list[str] | None = None) -> macro_core.JudgedRanking:
    """Queries = the label set's questions (``labels.evaluated``, in row order); relevant = positives, judged
    non-relevant = negatives; filter train + valid; an entity the system did not score is not retrieved."""
    pos, neg = labels.positives, labels.negatives
    evaluated = labels.evaluated
    query_of_row = np.full(len(pos), -1, dtype=np.int64)
    query_of_row[evaluated] = np.arange(evaluated.size)
    pos_rows, neg_rows = pos.row_ids(), neg.row_ids()
    keep_neg = query_of_row[neg_rows] >= 0
    neg_rows, neg_values = neg_rows[keep_neg], neg.values[keep_neg]
    pos_index = jr.lookup(pos_rows, pos.values)
    neg_index = jr.lookup(neg_rows, neg_values)
    pos_rank = np.where(jr.retrieved(pos_index), jr.ranks(pos_index, policy), np.inf)
    neg_rank = np.where(jr.retrieved(neg_index), jr.ranks(neg_index, policy), np.inf)
    num_retrieved = jr.num_retrieved[evaluated]
    num_ret = None if np.all(num_retrieved < 0) else np.where(
        num_retrieved < 0, np.iinfo(np.int64).max // 4, num_retrieved)
    return macro_core.JudgedRanking.from_judged_ranks(
        evaluated.size, query_of_row[pos_rows], pos_rank, query_of_row[neg_rows], neg_rank, num_ret=num_ret,
        query_ids=[qids[row] for row in evaluated.tolist()] if qids is not None else None,
    )


def macro_per_question(jr: JudgedRanks, labels: QuestionLabels, measures: dict[str, str],
                       policy: str = "realistic") -> dict[str, np.ndarray]:
    """Column -> value per question of the label set (``labels.evaluated`` order)."""
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
