"""Filtered MRR of a model (for early stopping and quick reports) and the engine's score function."""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from pooling.engine.questions import as_triples, known_answers, questions_from_triples
from pooling.engine.ranking import TiePolicy, rank

from .models import KGCModel


class ModelScores:
    """``score_fn(anchor, relation, side) -> (B, E)`` for ``pooling.engine.ranking.rank``, and its
    ``score_block(anchor, relation, side, start, stop) -> (B, stop - start)`` for entity blocks.

    Puts the model in eval mode (dropout/batch-norm off), moves the ids to the model's device and
    scores without autograd (not inference_mode: the engine edits the scores in place).
    """

    def __init__(self, model: KGCModel) -> None:
        model.eval()
        self.model = model
        self.device = next(model.parameters()).device

    def __call__(self, anchor: Tensor, relation: Tensor, side: int) -> Tensor:
        with torch.no_grad():
            return self.model.score_questions(anchor.to(self.device), relation.to(self.device), int(side)).float()

    def score_block(self, anchor: Tensor, relation: Tensor, side: int, start: int, stop: int) -> Tensor:
        with torch.no_grad():
            return self.model.score_questions_block(anchor.to(self.device), relation.to(self.device), int(side),
                                                    start, stop).float()


def model_score_fn(model: KGCModel) -> ModelScores:
    """The engine's score function of ``model`` (see :class:`ModelScores`)."""
    return ModelScores(model)


def filtered_ranks(model: KGCModel, triples: np.ndarray, filter_triples: np.ndarray, *,
                   batch_size: int = 1024, policy: TiePolicy = "realistic") -> np.ndarray:
    """Filtered ranks of every (question, answer) pair of ``triples``, both sides (SPEC 5.1).

    Questions are the unique head and tail questions of ``triples`` (engine order); every known
    answer in ``filter_triples`` other than the ranked one is removed from the candidates.
    """
    questions, targets = questions_from_triples(triples)
    result = rank(model_score_fn(model), questions, num_entities=model.num_entities,
                  filter=known_answers(questions, filter_triples), targets=targets, k=1,
                  batch_size=batch_size, device=next(model.parameters()).device)
    return result.ranks(policy)


def filtered_mrr(model: KGCModel, triples: np.ndarray, filter_triples: np.ndarray, *,
                 batch_size: int = 1024) -> float:
    """Answer-wise filtered MRR: each triple ranked on both sides, realistic ties (SPEC 5.1/5.2).

    ``filter_triples`` are all known true triples (train + valid, + test for the sparse protocol).
    NaN when ``triples`` is empty.
    """
    triples = as_triples(triples)
    if not len(triples):
        return float("nan")
    ranks = filtered_ranks(model, triples, as_triples(filter_triples), batch_size=batch_size)
    return float(np.mean(1.0 / ranks))
