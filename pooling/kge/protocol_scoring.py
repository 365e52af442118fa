"""Scorers of a :class:`~pooling.kge.models.KGCModel` for the protocols beyond link prediction (issue #16).

Django-free; imports torch, so only workers and ``bench/`` import it (never the web request path).

* :func:`block_scorer` -> ``evaluation.core.pair_ranking.BlockScorer``: scores of (head block x all tails) for a
  relation, returned as a float32 torch tensor so that ``top_pairs`` selects with ``torch.topk`` in place.
* :func:`relation_scorer` -> ``evaluation.core.property_prediction.RelationScorer``: score(h, r) for every
  original relation r, aggregated over the tails: ``max`` (default: the head has relation r if some tail makes a
  plausible triple), ``mean``, or ``logsumexp``.

Both put the model in eval mode (dropout / batch-norm off) and score without autograd. Relations are the
original ones (0..R-1): a tail question (h, r, ?) is the model's own ``score_tails(h, r)``.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import torch

from .models import KGCModel

__all__ = ["block_scorer", "relation_scorer"]

Aggregate = Literal["max", "mean", "logsumexp"]


def _device(model: KGCModel) -> torch.device:
    return next(model.parameters()).device


def block_scorer(model: KGCModel):
    """``score_block(relation, head_ids) -> torch.Tensor [len(head_ids), E]`` (float32, fresh tensor)."""
    model.eval()
    device = _device(model)

    def score_block(relation: int, head_ids: np.ndarray) -> torch.Tensor:
        if not 0 <= relation < model.num_relations:
            raise ValueError(f"relation must lie in 0..{model.num_relations - 1}, got {relation}")
        anchor = torch.as_tensor(np.asarray(head_ids, dtype=np.int64), device=device)
        with torch.no_grad():
            scores = model.score_tails(anchor, torch.full_like(anchor, int(relation)))
        return scores.float()

    return score_block


def relation_scorer(model: KGCModel, *, aggregate: Aggregate = "max"):
    """``score_relations(head_ids) -> np.ndarray [len(head_ids), R]``: per relation, the aggregate over all tails
    of score(h, r, t). Cost: R model calls of (B x E) per batch of heads."""
    if aggregate not in ("max", "mean", "logsumexp"):
        raise ValueError(f"unknown aggregate {aggregate!r}")
    model.eval()
    device = _device(model)

    def score_relations(head_ids: np.ndarray) -> np.ndarray:
        anchor = torch.as_tensor(np.asarray(head_ids, dtype=np.int64), device=device)
        result = torch.empty((len(anchor), model.num_relations), dtype=torch.float64)
        with torch.no_grad():
            for relation in range(model.num_relations):
                scores = model.score_tails(anchor, torch.full_like(anchor, relation)).float()
                scores = torch.nan_to_num(scores, nan=float("-inf"), posinf=float("inf"), neginf=float("-inf"))
                if aggregate == "max":
                    value = scores.max(dim=1).values
                elif aggregate == "mean":
                    value = scores.mean(dim=1)
                else:
                    value = torch.logsumexp(scores, dim=1)
                result[:, relation] = value.double().cpu()
        return result.numpy()

    return score_relations
