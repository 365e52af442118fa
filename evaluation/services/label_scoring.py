"""Every system's metrics on many subsets of one label set, fast: the judging simulation (issue 20) scores the
systems after every few hundred simulated judgments, and leave-one-system-out once per system.

The systems' judged ranks are computed (or read from the rank cache) once over the universe of the whole label
set (``evaluation/services/ranks.py``); each subset is then only the metrics' arithmetic: micro (SPEC 5.2, with
the rank family), macro (SPEC 5.3) and PROBE at alpha 1, beta 0 -- the columns of the evaluation's tables.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evaluation.core import probe as probe_core
from evaluation.services import metrics as m
from evaluation.services.ranks import judged_ranks, macro_filter, union_universe
from pooling.engine.questions import known_answers
from pooling.models import Sample, System
from pooling.selectors.kg import kg_triples
from pooling.selectors.pools import sample_questions, sample_triples


class LabelScorer:
    """Metrics of ``systems`` on subsets of the labelled ``triples`` (rows of a label set, sparse included)."""

    def __init__(self, sample: Sample, systems: Sequence[System], triples: np.ndarray, positive: np.ndarray, *,
                 policy: str = "realistic", cutoff: int = 10, device: str | None = None) -> None:
        self.sample, self.systems, self.policy = sample, list(systems), policy
        self.triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        self.positive = np.asarray(positive, dtype=bool)
        kg = sample.kg
        self.num_entities = kg.num_entities
        arrays = kg_triples(kg)
        self.questions = sample_questions(sample).questions
        self.tv_filter = macro_filter(arrays, self.questions)
        self.test_answers = known_answers(self.questions, arrays["test"])
        universe = union_universe(self.questions, arrays["test"], self.triples, sample_triples(sample))
        self.ranks = [judged_ranks(system, sample, self.questions, universe, self.tv_filter, device=device)
                      for system in self.systems]
        self.measures = m.macro_measures(cutoff)
        self.popularity = probe_core.TrainPopularity.from_triples(arrays["train"], kg.num_entities, kg.num_relations)

    @property
    def system_names(self) -> list[str]:
        return [s.name for s in self.systems]

    def scores(self, include: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """metric -> value per system, on the rows of the label set where ``include`` is True (default: all)."""
        keep = np.ones(len(self.triples), dtype=bool) if include is None else np.asarray(include, dtype=bool)
        triples, positive = self.triples[keep], self.positive[keep]
        positives = known_answers(self.questions, triples[positive])
        negatives = known_answers(self.questions, triples[~positive])
        labels = m.QuestionLabels.build(self.questions, positives, negatives, self.test_answers, self.tv_filter,
                                        self.num_entities)
        rows: list[dict[str, float]] = []
        deltas = None
        for jr in self.ranks:
            micro = m.micro_ranks(jr, labels, self.policy)
            row = m.micro_values(micro)
            macro = m.macro_per_question(jr, labels, self.measures, self.policy)
            row.update({name: float(values.mean()) if values.size else math.nan for name, values in macro.items()})
            if deltas is None:
                deltas = m.probe_inputs(self.popularity, micro, self.questions)
            row["PROBE"] = probe_core.probe_score(micro.ranks, micro.num_candidates, deltas.entity_delta,
                                                  deltas.relation_delta, 1.0, 0.0) if micro.ranks.size else math.nan
            rows.append(row)
        return {metric: np.array([row[metric] for row in rows], dtype=np.float64) for metric in rows[0]}
