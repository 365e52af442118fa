"""What every KGC trainer shares: the config, the results, seeding and the epoch loop with early stopping.

The 1-N trainer (:mod:`pooling.kge.training`) and the negative-sampling trainer
(:mod:`pooling.kge.negative_sampling`) both build on this module, so neither imports the other's internals.
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

from .models import KGCModel, architecture_class

STRATEGIES = ("auto", "1-n", "negative-sampling")


@dataclass
class TrainingConfig:
    """Everything that determines a training run (JSON-serialisable, stored in checkpoints).

    ``hyperparameters`` override the architecture's constructor defaults. ``eval_every`` is in epochs;
    ``patience`` counts evaluations without improvement of validation MRR before stopping (0 = never
    stop early). ``label_smoothing`` mixes the uniform distribution into the 1-N targets.
    ``device`` None picks ``"cuda"`` when available, else ``"cpu"``.

    ``strategy``: ``"1-n"`` scores every entity for every training question (:mod:`pooling.kge.training`),
    ``"negative-sampling"`` scores each training triple against ``negatives`` sampled entities
    (:mod:`pooling.kge.negative_sampling`; ``batch_size`` counts triples there), ``"auto"`` picks 1-N below
    :data:`pooling.kge.training.ONE_N_LIMIT` entities x distinct training questions, negative sampling above.
    ``valid_sample``: negative sampling stops early on the filtered MRR of this many validation triples (a seeded
    sample; 0 = all of them), since ranking a large KG's whole validation split against millions of entities at
    every evaluation would cost more than the training.
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
    strategy: str = "auto"
    negatives: int = 256
    valid_sample: int = 2000

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown training strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")

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
        settings = {key: value for key, value in data.items() if key in known}
        # A config written before strategies existed was trained 1-N: say so rather than re-deciding.
        settings.setdefault("strategy", "1-n")
        return cls(**settings)


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


def checked_triples(triples: np.ndarray, num_entities: int, num_relations: int, name: str) -> np.ndarray:
    """``triples`` as int64 (n, 3), with every id in range (an embedding lookup would fail obscurely)."""
    array = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if array.size and (array.min() < 0 or array[:, [0, 2]].max() >= num_entities
                       or array[:, 1].max() >= num_relations):
        raise ValueError(f"{name} holds ids outside 0..{num_entities - 1} (entities) / "
                         f"0..{num_relations - 1} (relations)")
    return array


def fit(model: KGCModel, config: TrainingConfig, run_epoch: Callable[[], float],
        evaluate: Callable[[], float] | None, progress: ProgressCallback | bool | None, started: float,
        description: str) -> TrainingResult:
    """Run ``run_epoch`` (returns the epoch's mean loss) with early stopping on ``evaluate`` (validation MRR).

    ``evaluate`` runs every ``config.eval_every`` epochs and after the last; training stops after
    ``config.patience`` evaluations without improvement and the best state is restored. ``progress``: a
    callable receiving an :class:`EpochReport` per epoch; None shows a tqdm bar (auto-hidden when not on a
    terminal); False is silent.
    """
    bar = None
    if progress is None:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.epochs, desc=description, unit="epoch", disable=None)

    history: list[dict[str, Any]] = []
    best_mrr: float | None = None
    best_epoch: int | None = None
    best_state: dict[str, Tensor] | None = None
    evaluations_without_improvement = 0
    epoch = 0
    try:
        for epoch in range(1, config.epochs + 1):
            loss = run_epoch()
            valid_mrr = None
            if evaluate is not None and (epoch % config.eval_every == 0 or epoch == config.epochs):
                valid_mrr = evaluate()
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
