"""1-N training of KGC models with early stopping on validation filtered MRR.

Every training triple (h, r, t) yields the tail question (h, r, ?) and, through the reciprocal
convention of :mod:`pooling.kge.models`, the head question as (t, r + R, ?). Identical questions are
merged, and each is trained with a softmax cross-entropy over all entities whose target is the
normalised multi-hot vector of its training answers (optionally label-smoothed).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from .evaluation import filtered_mrr
# TrainingConfig and friends live in .fitting (shared with negative sampling); re-exported here, where callers
# have always imported them from.
from .fitting import (  # noqa: F401 (re-exports)
    EpochReport,
    ProgressCallback,
    TrainingConfig,
    TrainingResult,
    checked_triples,
    fit,
    resolve_device,
    seed_everything,
)
from .models import KGCModel, build_model
from .negative_sampling import train_negative_sampling

#: ``strategy="auto"`` trains 1-N while entities x distinct training questions stays at or below this, and with
#: negative sampling above it. A 1-N epoch costs about that many scores (x dim) and its batch holds
#: batch_size x entities floats; measured (DistMult d=64, 1 CPU thread): see README "Training at scale".
ONE_N_LIMIT = 10**10


def distinct_questions(train_triples: np.ndarray, num_relations: int) -> int:
    """Number of distinct 1-N training questions (h, r, ?) and (t, r + R, ?) of ``train_triples``."""
    triples = np.asarray(train_triples, dtype=np.int64).reshape(-1, 3)
    keys = np.concatenate([triples[:, 0] * (2 * num_relations) + triples[:, 1],
                           triples[:, 2] * (2 * num_relations) + triples[:, 1] + num_relations])
    return int(np.unique(keys).size)


def chosen_strategy(config: TrainingConfig, train_triples: np.ndarray, num_entities: int, num_relations: int) -> str:
    """``config.strategy``, with ``"auto"`` resolved by :data:`ONE_N_LIMIT`."""
    if config.strategy != "auto":
        return config.strategy
    if num_entities * distinct_questions(train_triples, num_relations) <= ONE_N_LIMIT:
        return "1-n"
    return "negative-sampling"


@dataclass
class TrainingQuestions:
    """Merged 1-N training questions in internal (reciprocal, tail-only) form, answers as CSR."""

    anchor: Tensor  # (Q,) int64
    relation: Tensor  # (Q,) int64 in 0..2R-1
    offsets: Tensor  # (Q + 1,) int64
    answers: Tensor  # (offsets[-1],) int64

    @classmethod
    def from_triples(cls, triples: np.ndarray, num_relations: int) -> TrainingQuestions:
        triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        heads, relations, tails = triples[:, 0], triples[:, 1], triples[:, 2]
        anchor = np.concatenate([heads, tails])
        relation = np.concatenate([relations, relations + num_relations])
        answer = np.concatenate([tails, heads])
        # Sort by (anchor, relation, answer) so that identical questions are contiguous.
        order = np.lexsort((answer, relation, anchor))
        anchor, relation, answer = anchor[order], relation[order], answer[order]
        # Drop duplicate triples, then find question boundaries.
        if len(answer):
            keep = np.ones(len(answer), dtype=bool)
            keep[1:] = (np.diff(anchor) != 0) | (np.diff(relation) != 0) | (np.diff(answer) != 0)
            anchor, relation, answer = anchor[keep], relation[keep], answer[keep]
        starts = np.flatnonzero(np.r_[True, (np.diff(anchor) != 0) | (np.diff(relation) != 0)]) if len(anchor) \
            else np.zeros(0, dtype=np.int64)
        offsets = np.r_[starts, len(answer)].astype(np.int64)
        return cls(torch.from_numpy(anchor[starts].copy()), torch.from_numpy(relation[starts].copy()),
                   torch.from_numpy(offsets), torch.from_numpy(answer.copy()))

    def __len__(self) -> int:
        return len(self.anchor)

    def to(self, device: torch.device) -> TrainingQuestions:
        return TrainingQuestions(self.anchor.to(device), self.relation.to(device), self.offsets.to(device),
                                 self.answers.to(device))

    def target_matrix(self, batch: Tensor, num_entities: int, label_smoothing: float) -> Tensor:
        """(B, E) target distributions: uniform over each question's answers, then smoothed."""
        starts = self.offsets[batch]
        counts = self.offsets[batch + 1] - starts
        rows = torch.repeat_interleave(torch.arange(len(batch), device=batch.device), counts)
        # Position of each answer in `answers`: its question's start plus its index within the question.
        first_of_row = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
        positions = torch.repeat_interleave(starts, counts) + torch.arange(len(rows), device=batch.device) - first_of_row
        targets = torch.zeros(len(batch), num_entities, device=batch.device)
        targets[rows, self.answers[positions]] = (1.0 / counts.float())[rows]
        if label_smoothing:
            targets = (1.0 - label_smoothing) * targets + label_smoothing / num_entities
        return targets


def train(
    config: TrainingConfig,
    train_triples: np.ndarray,
    valid_triples: np.ndarray | None,
    num_entities: int,
    num_relations: int,
    *,
    known_triples: np.ndarray | None = None,
    progress: ProgressCallback | bool | None = None,
) -> TrainingResult:
    """Train ``config.architecture`` on ``train_triples`` and return the best model.

    1-N here, or negative sampling (:func:`pooling.kge.negative_sampling.train_negative_sampling`) as
    ``config.strategy`` says (see :func:`chosen_strategy`).

    Validation filtered MRR (answer-wise, both sides, filter = train + valid + ``known_triples``) is
    computed every ``config.eval_every`` epochs; training stops after ``config.patience`` evaluations
    without improvement and the best state is restored. Without ``valid_triples`` (or with an empty
    array) the model of the last epoch is returned. ``progress``: a callable receiving an
    :class:`EpochReport` per epoch; None shows a tqdm bar (auto-hidden when not on a terminal);
    False is silent.
    """
    if chosen_strategy(config, train_triples, num_entities, num_relations) == "negative-sampling":
        return train_negative_sampling(config, train_triples, valid_triples, num_entities, num_relations,
                                       known_triples=known_triples, progress=progress)
    previous_threads = torch.get_num_threads()
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    try:
        return _train(config, train_triples, valid_triples, num_entities, num_relations, known_triples, progress)
    finally:
        torch.set_num_threads(previous_threads)


def _train(config: TrainingConfig, train_triples: np.ndarray, valid_triples: np.ndarray | None,
           num_entities: int, num_relations: int, known_triples: np.ndarray | None,
           progress: ProgressCallback | bool | None) -> TrainingResult:
    device = resolve_device(config.device)
    seed_everything(config.seed)
    started = time.perf_counter()

    checked_triples(train_triples, num_entities, num_relations, "train_triples")  # fail before building anything
    model = build_model(config.architecture, num_entities, num_relations, **config.hyperparameters).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    questions = TrainingQuestions.from_triples(train_triples, num_relations).to(device)
    # Shuffling uses its own generator so that the order does not depend on dropout's draws.
    shuffle_generator = torch.Generator().manual_seed(config.seed)
    # BatchNorm cannot train on a single example: such models drop a final batch of one.
    skip_single = any(isinstance(module, torch.nn.modules.batchnorm._BatchNorm) for module in model.modules())

    has_validation = valid_triples is not None and len(valid_triples) > 0
    filter_triples = [checked_triples(train_triples, num_entities, num_relations, "train_triples")]
    if has_validation:
        filter_triples.append(checked_triples(valid_triples, num_entities, num_relations, "valid_triples"))
    if known_triples is not None and len(known_triples):
        filter_triples.append(checked_triples(known_triples, num_entities, num_relations, "known_triples"))
    filter_all = np.concatenate(filter_triples)

    def evaluate() -> float:
        return filtered_mrr(model, valid_triples, filter_all, batch_size=config.eval_batch_size)

    return fit(model, config,
               lambda: _train_one_epoch(model, optimizer, questions, config, num_entities, shuffle_generator,
                                        skip_single),
               evaluate if has_validation else None, progress, started, f"train {config.architecture}")


def _train_one_epoch(model: KGCModel, optimizer: torch.optim.Optimizer, questions: TrainingQuestions,
                     config: TrainingConfig, num_entities: int, generator: torch.Generator,
                     skip_single: bool) -> float:
    """One pass over the shuffled training questions; returns the mean loss per question."""
    model.train()
    order = torch.randperm(len(questions), generator=generator).to(questions.anchor.device)
    total_loss = 0.0
    for batch in order.split(config.batch_size):
        if len(batch) == 1 and skip_single:
            continue
        anchor, relation = questions.anchor[batch], questions.relation[batch]
        targets = questions.target_matrix(batch, num_entities, config.label_smoothing)
        log_probabilities = F.log_softmax(model.score_tails(anchor, relation), dim=-1)
        loss = -(targets * log_probabilities).sum(dim=-1).mean()
        optimizer.zero_grad(set_to_none=True)
        (loss + model.penalty(anchor, relation)).backward()
        optimizer.step()
        total_loss += loss.item() * len(batch)
    return total_loss / max(len(questions), 1)

