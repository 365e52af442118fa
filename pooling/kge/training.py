"""1-N training of KGC models with early stopping on validation filtered MRR.

Every training triple (h, r, t) yields the tail question (h, r, ?) and, through the reciprocal
convention of :mod:`pooling.kge.models`, the head question as (t, r + R, ?). Identical questions are
merged, and each is trained with a softmax cross-entropy over all entities whose target is the
normalised multi-hot vector of its training answers (optionally label-smoothed).
"""
from __future__ import annotations

import copy
import dataclasses
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from .evaluation import filtered_mrr
from .models import KGCModel, architecture_class, build_model


@dataclass
class TrainingConfig:
    """Everything that determines a training run (JSON-serialisable, stored in checkpoints).

    ``hyperparameters`` override the architecture's constructor defaults. ``eval_every`` is in epochs;
    ``patience`` counts evaluations without improvement of validation MRR before stopping (0 = never
    stop early). ``label_smoothing`` mixes the uniform distribution into the 1-N targets.
    ``device`` None picks ``"cuda"`` when available, else ``"cpu"``.
    """

    architecture: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    epochs: int = 200
    batch_size: int = 256
    lr: float = 0.003
    seed: int = 0
    eval_every: int = 10
    patience: int = 5
    label_smoothing: float = 0.0
    weight_decay: float = 0.0
    eval_batch_size: int = 1024
    device: str | None = None
    #: torch intra-op CPU threads while training (None keeps torch's setting). On a small shared CPU,
    #: 1 is often fastest: with 2 threads on 2 busy cores we measured 2-4x slower epochs.
    num_threads: int | None = None

    @classmethod
    def for_architecture(cls, architecture: str, **overrides: Any) -> TrainingConfig:
        """A config with the architecture's recommended optimiser settings, then ``overrides``."""
        settings: dict[str, Any] = dict(architecture_class(architecture).TRAINING_DEFAULTS)
        settings.update(overrides)
        return cls(architecture=architecture.lower(), **settings)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass
class EpochReport:
    """What a ``progress`` callback receives after every epoch."""

    epoch: int
    epochs: int
    loss: float
    valid_mrr: float | None  # None in epochs without evaluation
    best_valid_mrr: float | None
    best_epoch: int | None
    seconds: float  # since the start of training


@dataclass
class TrainingResult:
    model: KGCModel  # in eval mode, holding the best state (by validation MRR)
    best_valid_mrr: float | None  # None when trained without validation triples
    history: list[dict[str, Any]]  # one entry per epoch: epoch, loss, valid_mrr, seconds
    epochs_run: int
    seconds: float
    best_epoch: int | None = None


ProgressCallback = Callable[[EpochReport], None]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` if given, else CUDA when available, else CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA) random generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds all CUDA devices


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
    """Train ``config.architecture`` 1-N on ``train_triples`` and return the best model.

    Validation filtered MRR (answer-wise, both sides, filter = train + valid + ``known_triples``) is
    computed every ``config.eval_every`` epochs; training stops after ``config.patience`` evaluations
    without improvement and the best state is restored. Without ``valid_triples`` (or with an empty
    array) the model of the last epoch is returned. ``progress``: a callable receiving an
    :class:`EpochReport` per epoch; None shows a tqdm bar (auto-hidden when not on a terminal);
    False is silent.
    """
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

    _checked(train_triples, num_entities, num_relations, "train_triples")  # fail before building anything
    model = build_model(config.architecture, num_entities, num_relations, **config.hyperparameters).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    questions = TrainingQuestions.from_triples(train_triples, num_relations).to(device)
    # Shuffling uses its own generator so that the order does not depend on dropout's draws.
    shuffle_generator = torch.Generator().manual_seed(config.seed)
    # BatchNorm cannot train on a single example: such models drop a final batch of one.
    skip_single = any(isinstance(module, torch.nn.modules.batchnorm._BatchNorm) for module in model.modules())

    has_validation = valid_triples is not None and len(valid_triples) > 0
    filter_triples = [_checked(train_triples, num_entities, num_relations, "train_triples")]
    if has_validation:
        filter_triples.append(_checked(valid_triples, num_entities, num_relations, "valid_triples"))
    if known_triples is not None and len(known_triples):
        filter_triples.append(_checked(known_triples, num_entities, num_relations, "known_triples"))
    filter_all = np.concatenate(filter_triples)

    bar = None
    if progress is None:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.epochs, desc=f"train {config.architecture}", unit="epoch", disable=None)

    history: list[dict[str, Any]] = []
    best_mrr: float | None = None
    best_epoch: int | None = None
    best_state: dict[str, Tensor] | None = None
    evaluations_without_improvement = 0
    epoch = 0
    try:
        for epoch in range(1, config.epochs + 1):
            loss = _train_one_epoch(model, optimizer, questions, config, num_entities, shuffle_generator,
                                    skip_single)
            valid_mrr = None
            if has_validation and (epoch % config.eval_every == 0 or epoch == config.epochs):
                valid_mrr = filtered_mrr(model, valid_triples, filter_all, batch_size=config.eval_batch_size)
                if best_mrr is None or valid_mrr > best_mrr:
                    best_mrr, best_epoch = valid_mrr, epoch
                    best_state = copy.deepcopy(model.state_dict())
                    evaluations_without_improvement = 0
                else:
                    evaluations_without_improvement += 1
            seconds = time.perf_counter() - started
            history.append({"epoch": epoch, "loss": loss, "valid_mrr": valid_mrr, "seconds": seconds})
            report = EpochReport(epoch, config.epochs, loss, valid_mrr, best_mrr, best_epoch, seconds)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}", valid_mrr="-" if best_mrr is None else f"{best_mrr:.4f}")
            elif callable(progress):
                progress(report)
            if not math.isfinite(loss):
                raise FloatingPointError(f"training loss became {loss} at epoch {epoch}; lower the learning rate")
            if config.patience and evaluations_without_improvement >= config.patience:
                break
    finally:
        if bar is not None:
            bar.close()

    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return TrainingResult(model=model, best_valid_mrr=best_mrr, history=history, epochs_run=epoch,
                          seconds=time.perf_counter() - started, best_epoch=best_epoch)


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



def _checked(triples: np.ndarray, num_entities: int, num_relations: int, name: str) -> np.ndarray:
    """``triples`` as int64 (n, 3), with every id in range (an embedding lookup would fail obscurely)."""
    array = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if array.size and (array.min() < 0 or array[:, [0, 2]].max() >= num_entities
                       or array[:, 1].max() >= num_relations):
        raise ValueError(f"{name} holds ids outside 0..{num_entities - 1} (entities) / "
                         f"0..{num_relations - 1} (relations)")
    return array
