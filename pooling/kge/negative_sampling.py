"""Negative-sampling training of KGC models, for graphs whose entity table 1-N training cannot score per batch.

Each training triple (h, r, t) gives two positives, as in 1-N training through the reciprocal convention of
:mod:`pooling.kge.models`: the tail question (h, r, ?) answered by t and the head question (t, r + R, ?)
answered by h (corrupting the tail, resp. the head). Each batch draws ``config.negatives`` entities uniformly
at random, shared by all its questions, and trains a sampled softmax cross-entropy: the positive against the
batch's negatives (a negative equal to the positive is masked out).

Why this loss: it is the sampled estimate of the 1-N trainer's softmax cross-entropy, so the architectures'
score scales and defaults carry over unchanged: distance models (TransE, RotatE) need no margin
hyperparameter, which the self-adversarial / logistic losses (Sun et al. 2019) would need to be tuned per
graph. Shared negatives turn the scoring into one (2B, D) x (D, K) product per batch.

Cost: one epoch reads and updates only the embedding rows of its batches: O(triples x negatives x dim) time.
Embeddings take sparse gradients (``nn.Embedding(sparse=True)``) and are updated by ``SparseAdam`` (lazy Adam:
only the rows in the batch move); the other parameters (ConvE/TuckER layers, ConvE's entity bias) by Adam.
Memory is O(entities x dim) (the weights and SparseAdam's two moments); no (batch, entities) tensor is built,
except by the validation ranking, whose batch is capped at :data:`EVAL_SCORES` scores.
``label_smoothing`` does not apply here, and ``weight_decay`` only to the dense parameters.

Distributed (``distributed=True`` inside an initialised ``torch.distributed`` process group, see
:mod:`pooling.kge.distributed`): the loss module is wrapped in ``DistributedDataParallel``, each rank trains on
its shard of every epoch's shuffled triples, gradients are averaged by DDP (sparse all-reduce on gloo; on NCCL,
which cannot reduce sparse tensors, the embeddings take dense gradients), rank 0 evaluates and broadcasts the
validation MRR so every rank stops at the same epoch.
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from pooling.engine.questions import as_triples

from .evaluation import filtered_mrr
from .fitting import (
    ProgressCallback,
    TrainingConfig,
    TrainingResult,
    checked_triples,
    fit,
    resolve_device,
    seed_everything,
)
from .models import KGCModel, build_model

#: The validation ranking scores at most this many (question, entity) pairs per batch (16 Mi floats = 64 MiB).
EVAL_SCORES = 2**24


class SampledSoftmaxLoss(nn.Module):
    """Wraps a model: ``forward`` returns (loss, loss + penalty) of a batch; the module DDP wraps."""

    def __init__(self, model: KGCModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, anchor: Tensor, relation: Tensor, answer: Tensor, negatives: Tensor) -> tuple[Tensor, Tensor]:
        query = self.model.tail_query(anchor, relation)
        positive = self.model.score_query(query, answer.unsqueeze(1))  # (B, 1)
        negative = self.model.score_query(query, negatives)  # (B, K), negatives shared
        negative = negative.masked_fill(negatives.unsqueeze(0) == answer.unsqueeze(1), float("-inf"))
        loss = -F.log_softmax(torch.cat([positive, negative], dim=1), dim=1)[:, 0].mean()
        return loss, loss + self.model.penalty(anchor, relation)


def set_sparse_embeddings(model: KGCModel, sparse: bool) -> None:
    """Make every ``nn.Embedding`` of ``model`` produce sparse (or dense) gradients (weights unchanged)."""
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            module.sparse = sparse


def make_optimizers(model: KGCModel, config: TrainingConfig, sparse: bool) -> list[torch.optim.Optimizer]:
    """SparseAdam for sparse embeddings, Adam for everything else."""
    embedding_parameters = [module.weight for module in model.modules()
                            if isinstance(module, nn.Embedding) and sparse]
    embedding_ids = {id(parameter) for parameter in embedding_parameters}
    dense = [parameter for parameter in model.parameters() if id(parameter) not in embedding_ids]
    optimizers: list[torch.optim.Optimizer] = []
    if embedding_parameters:
        optimizers.append(torch.optim.SparseAdam(embedding_parameters, lr=config.lr))
    if dense:
        optimizers.append(torch.optim.Adam(dense, lr=config.lr, weight_decay=config.weight_decay))
    return optimizers


def validation_sample(valid_triples: np.ndarray, size: int, seed: int) -> np.ndarray:
    """``size`` validation triples drawn without replacement with ``seed`` (in file order); all if size is 0."""
    if not size or size >= len(valid_triples):
        return valid_triples
    chosen = np.random.default_rng(seed).choice(len(valid_triples), size=size, replace=False)
    return valid_triples[np.sort(chosen)]


def relevant_filter(triples: np.ndarray, filter_triples: np.ndarray, num_relations: int) -> np.ndarray:
    """The triples of ``filter_triples`` that answer a question of ``triples`` (the rest filters nothing).

    Done once, so that every evaluation of a small validation sample does not sort the whole training set.
    """
    tail_keys = np.unique(triples[:, 0] * num_relations + triples[:, 1])
    head_keys = np.unique(triples[:, 2] * num_relations + triples[:, 1])
    keep = (np.isin(filter_triples[:, 0] * num_relations + filter_triples[:, 1], tail_keys)
            | np.isin(filter_triples[:, 2] * num_relations + filter_triples[:, 1], head_keys))
    return filter_triples[keep]


def held_out_mrr(model: KGCModel, triples: np.ndarray, known: np.ndarray, num_relations: int, config: TrainingConfig,
                 *, sample: bool) -> tuple[float, int]:
    """(filtered MRR, triples ranked) of held-out ``triples`` against every entity, ``known`` filtered, with the
    ranking batch capped at :data:`EVAL_SCORES` scores (1,024 questions x 5 M entities would be 20 GiB); with
    ``sample``, of ``config.valid_sample`` of them drawn with ``config.seed`` (a large KG's whole test split is
    hours of CPU)."""
    triples = as_triples(triples)
    if sample:
        triples = validation_sample(triples, config.valid_sample, config.seed)
    if not len(triples):
        return float("nan"), 0
    batch = max(1, min(config.eval_batch_size, EVAL_SCORES // max(model.num_entities, 1)))
    mrr = filtered_mrr(model, triples, relevant_filter(triples, as_triples(known), num_relations), batch_size=batch)
    return mrr, len(triples)


def shard(order: Tensor, rank: int, world_size: int) -> Tensor:
    """Rank ``rank``'s share of ``order``, padded by wrapping around so every rank gets as many items."""
    per_rank = -(-len(order) // world_size)
    padded = torch.cat([order, order[: per_rank * world_size - len(order)]]) if world_size > 1 else order
    return padded[rank::world_size]


def train_negative_sampling(
    config: TrainingConfig,
    train_triples: np.ndarray,
    valid_triples: np.ndarray | None,
    num_entities: int,
    num_relations: int,
    *,
    known_triples: np.ndarray | None = None,
    progress: ProgressCallback | bool | None = None,
    distributed: bool = False,
) -> TrainingResult:
    """Train ``config.architecture`` with sampled negatives; same contract as :func:`pooling.kge.training.train`.

    Early stopping uses the filtered MRR of ``config.valid_sample`` seeded validation triples (filter = train +
    valid + ``known_triples``).
    """
    previous_threads = torch.get_num_threads()
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    try:
        return _train(config, train_triples, valid_triples, num_entities, num_relations, known_triples, progress,
                      distributed)
    finally:
        torch.set_num_threads(previous_threads)


def _train(config: TrainingConfig, train_triples: np.ndarray, valid_triples: np.ndarray | None,
           num_entities: int, num_relations: int, known_triples: np.ndarray | None,
           progress: ProgressCallback | bool | None, distributed: bool) -> TrainingResult:
    import torch.distributed as dist

    device = resolve_device(config.device)
    rank, world_size = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    seed_everything(config.seed)  # same initial weights everywhere (DDP also broadcasts rank 0's)
    started = time.perf_counter()

    train_array = checked_triples(train_triples, num_entities, num_relations, "train_triples")
    model = build_model(config.architecture, num_entities, num_relations, **config.hyperparameters).to(device)
    # NCCL cannot all-reduce sparse gradients; a GPU's dense Adam step over the table is cheap anyway.
    sparse = not (distributed and dist.get_backend() == "nccl")
    set_sparse_embeddings(model, sparse)
    optimizers = make_optimizers(model, config, sparse)
    loss_module: nn.Module = SampledSoftmaxLoss(model)
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        loss_module = DistributedDataParallel(loss_module, device_ids=[device.index] if device.type == "cuda" else None)
    triples = torch.from_numpy(train_array).to(device)
    # Shuffling (the same on every rank) and negatives (per rank) use their own generators, independent of dropout.
    shuffle_generator = torch.Generator().manual_seed(config.seed)
    negative_generator = torch.Generator().manual_seed(config.seed * 7919 + 1 + rank)

    evaluate = None
    if valid_triples is not None and len(valid_triples):
        valid_array = checked_triples(valid_triples, num_entities, num_relations, "valid_triples")
        sample = validation_sample(valid_array, config.valid_sample, config.seed)
        known = [train_array, valid_array]
        if known_triples is not None and len(known_triples):
            known.append(checked_triples(known_triples, num_entities, num_relations, "known_triples"))
        filter_sample = relevant_filter(sample, as_triples(np.concatenate(known)), num_relations)
        eval_batch = max(1, min(config.eval_batch_size, EVAL_SCORES // num_entities))

        def evaluate() -> float:
            mrr = filtered_mrr(model, sample, filter_sample, batch_size=eval_batch) if rank == 0 else 0.0
            if distributed:  # every rank must take the same early-stopping decision
                shared = torch.tensor([mrr], dtype=torch.float64,
                                      device=device if dist.get_backend() == "nccl" else "cpu")
                dist.broadcast(shared, src=0)
                mrr = float(shared.item())
            return mrr

    def run_epoch() -> float:
        loss_module.train()
        order = shard(torch.randperm(len(triples), generator=shuffle_generator), rank, world_size)
        total, count = 0.0, 0
        for batch in order.split(config.batch_size):
            heads, relations, tails = triples[batch.to(device)].unbind(1)
            anchor = torch.cat([heads, tails])
            relation = torch.cat([relations, relations + num_relations])
            answer = torch.cat([tails, heads])
            negatives = torch.randint(num_entities, (config.negatives,), generator=negative_generator).to(device)
            loss, objective = loss_module(anchor, relation, answer, negatives)
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            objective.backward()
            for optimizer in optimizers:
                optimizer.step()
            total += loss.item() * len(anchor)
            count += len(anchor)
        return total / max(count, 1)

    try:
        return fit(model, config, run_epoch, evaluate, progress if rank == 0 else False, started,
                   f"train {config.architecture} (negative sampling)")
    finally:
        set_sparse_embeddings(model, False)  # the returned model is an ordinary one
