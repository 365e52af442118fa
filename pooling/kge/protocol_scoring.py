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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import numpy as np
import torch

from .models import KGCModel, _BilinearModel

__all__ = ["block_scorer", "relation_scorer"]

Aggregate = Literal["max", "mean", "logsumexp"]


def _device(model: KGCModel) -> torch.device:
    return next(model.parameters()).device


@contextmanager
def _single_torch_thread() -> Iterator[None]:
    """Run small torch ops on one thread: after a multi-threaded torch op its OpenMP workers keep spinning for a
    while, and on a small CPU they then slow the NumPy sgemm that follows (measured: 35-40% on 2 cores)."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def block_scorer(model: KGCModel):
    """``score_block(relation, head_ids) -> [len(head_ids), E]`` float32 scores, a fresh array or tensor.

    Bilinear models (DistMult, ComplEx, RESCAL) on the CPU take the product query @ entities^T in NumPy: its
    sgemm measured about 4x faster than torch's on this project's CPU machine (see bench/pair_ranking.py);
    every other case returns the model's own ``score_tails`` tensor (on the model's device).
    """
    model.eval()
    device = _device(model)
    if isinstance(model, _BilinearModel) and device.type == "cpu":
        entities_t = model.entity.weight.detach().numpy().T  # a view: follows later training

        def score_block_numpy(relation: int, head_ids: np.ndarray) -> np.ndarray:
            if not 0 <= relation < model.num_relations:
                raise ValueError(f"relation must lie in 0..{model.num_relations - 1}, got {relation}")
            anchor = torch.as_tensor(np.asarray(head_ids, dtype=np.int64))
            with torch.no_grad(), _single_torch_thread():
                query = model.query(anchor, torch.full_like(anchor, int(relation))).float()
            return query.numpy() @ entities_t

        return score_block_numpy

    def score_block(relation: int, head_ids: np.ndarray) -> torch.Tensor:
        if not 0 <= relation < model.num_relations:
            raise ValueError(f"relation must lie in 0..{model.num_relations - 1}, got {relation}")
        anchor = torch.as_tensor(np.asarray(head_ids, dtype=np.int64), device=device)
        with torch.no_grad():
            scores = model.score_tails(anchor, torch.full_like(anchor, int(relation)))
        return scores.float()

    return score_block


def relation_scorer(model: KGCModel, *, aggregate: Aggregate = "max"):
    """``score_relations(head_ids) -> np.ndarray [len(head_ids), R]`` (float64): per relation, the aggregate over
    all tails of score(h, r, t) (NaN counts as -inf). Cost: R blocks of (B x E) scores per batch of heads, taken
    by :func:`block_scorer` (so the NumPy product on the CPU for bilinear models)."""
    if aggregate not in ("max", "mean", "logsumexp"):
        raise ValueError(f"unknown aggregate {aggregate!r}")
    score_block = block_scorer(model)

    def reduce_numpy(scores: np.ndarray) -> np.ndarray:
        scores = np.where(np.isnan(scores), -np.inf, scores).astype(np.float64)
        if aggregate == "max":
            return scores.max(axis=1)
        if aggregate == "mean":
            return scores.mean(axis=1)
        top = scores.max(axis=1, keepdims=True)
        shift = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            return (shift + np.log(np.exp(scores - shift).sum(axis=1, keepdims=True)))[:, 0]

    def reduce_torch(scores: torch.Tensor) -> np.ndarray:
        scores = torch.nan_to_num(scores.float(), nan=float("-inf"), posinf=float("inf"), neginf=float("-inf"))
        if aggregate == "max":
            value = scores.max(dim=1).values
        elif aggregate == "mean":
            value = scores.mean(dim=1)
        else:
            value = torch.logsumexp(scores, dim=1)
        return value.double().cpu().numpy()

    def score_relations(head_ids: np.ndarray) -> np.ndarray:
        head_ids = np.asarray(head_ids, dtype=np.int64)
        result = np.empty((len(head_ids), model.num_relations), dtype=np.float64)
        for relation in range(model.num_relations):
            block = score_block(relation, head_ids)
            result[:, relation] = reduce_torch(block) if isinstance(block, torch.Tensor) else reduce_numpy(block)
        return result

    return score_relations
