"""Writes: KGC systems trained here (pooling.kge) and their checkpoints.

torch is imported lazily, inside the functions that train or score, never at module import.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import transaction
from django.utils.text import slugify

from pooling.models import KnowledgeGraph, System
from pooling.selectors.kg import kg_triples
from pooling.storage import storage_path

ProgressFn = Callable[[str, int, int], None]


class SystemServiceError(Exception):
    """A system could not be created or trained (bad architecture or options, name taken, no checkpoint)."""


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def training_config(
    architecture: str,
    *,
    dim: int | None = None,
    epochs: int | None = None,
    lr: float | None = None,
    batch_size: int | None = None,
    seed: int = 0,
    patience: int | None = None,
    eval_every: int | None = None,
    device: str | None = None,
    hyperparameters: dict[str, Any] | None = None,
    num_threads: int | None = None,
) -> dict[str, Any]:
    """A JSON training config: the architecture's recommended settings, then the given overrides.

    ``dim`` sets the embedding size (``entity_dim`` for TuckER). Raises SystemServiceError for an unknown
    architecture.
    """
    from pooling.kge import TrainingConfig  # torch

    overrides: dict[str, Any] = {"seed": seed}
    for key, value in (("epochs", epochs), ("lr", lr), ("batch_size", batch_size), ("patience", patience),
                       ("eval_every", eval_every), ("device", device), ("num_threads", num_threads)):
        if value is not None:
            overrides[key] = value
    hparams = dict(hyperparameters or {})
    if dim is not None:
        hparams["entity_dim" if architecture.lower() == "tucker" else "dim"] = dim
    overrides["hyperparameters"] = hparams
    try:
        config = TrainingConfig.for_architecture(architecture, **overrides)
    except (ValueError, TypeError) as exc:
        raise SystemServiceError(str(exc)) from None
    if "eval_every" not in overrides:
        config.eval_every = max(1, min(config.eval_every, config.epochs))
    return config.to_dict()


def create_system(kg: KnowledgeGraph, architecture: str, *, name: str | None = None, config: dict[str, Any]) -> System:
    """A pending trained system (train it with :func:`train_system`, in-process or on a worker)."""
    name = name or slugify(architecture)
    if System.objects.filter(kg=kg, name=name).exists():
        raise SystemServiceError(f"a system named {name!r} already exists in {kg.name}")
    return System.objects.create(
        kg=kg, name=name, architecture=architecture.lower(), origin=System.Origin.TRAINED, config=config,
        status=System.Status.PENDING,
    )


def train_system(system: System, *, progress: ProgressFn = _no_progress) -> System:
    """Train ``system`` on its KG's train split (early stopping on valid MRR), checkpoint it, record MRRs.

    Idempotent: a system that is already ready is returned unchanged. On error the system is marked failed
    (with the message) and the exception re-raised.
    """
    from pooling.kge import TrainingConfig, filtered_mrr, save_checkpoint, train  # torch

    system.refresh_from_db()
    if system.status == System.Status.READY and system.checkpoint_file:
        return system
    System.objects.filter(pk=system.pk).update(status=System.Status.TRAINING, error="")
    kg = system.kg
    try:
        arrays = kg_triples(kg)
        config = TrainingConfig.from_dict(system.config)
        total_epochs = config.epochs

        def report(epoch_report: Any) -> None:
            progress(f"train {system.name}", epoch_report.epoch, total_epochs)

        result = train(config, arrays["train"], arrays["valid"], kg.num_entities, kg.num_relations,
                       known_triples=arrays["test"], progress=report)
        progress(f"train {system.name}", total_epochs, total_epochs)
        known = np.concatenate([arrays["train"], arrays["valid"], arrays["test"]])
        valid_mrr = result.best_valid_mrr
        if valid_mrr is None and len(arrays["valid"]):
            valid_mrr = filtered_mrr(result.model, arrays["valid"], known, batch_size=config.eval_batch_size)
        test_mrr = filtered_mrr(result.model, arrays["test"], known, batch_size=config.eval_batch_size) \
            if len(arrays["test"]) else None
        relative = f"systems/{kg.pk}-{kg.name}/{system.pk}-{system.name}.pt"
        metrics = {"valid_mrr": valid_mrr, "test_mrr": test_mrr, "epochs_run": result.epochs_run,
                   "best_epoch": result.best_epoch, "seconds": result.seconds}
        save_checkpoint(storage_path(relative), result.model, config, metrics)
    except Exception as exc:
        System.objects.filter(pk=system.pk).update(status=System.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    with transaction.atomic():
        System.objects.filter(pk=system.pk).update(
            status=System.Status.READY, checkpoint_file=relative, valid_mrr=valid_mrr, test_mrr=test_mrr, error="",
            config={**system.config, "epochs_run": result.epochs_run, "best_epoch": result.best_epoch,
                    "train_seconds": round(result.seconds, 3)},
        )
    system.refresh_from_db()
    return system


def train_new_system(
    kg: KnowledgeGraph, architecture: str, *, name: str | None = None, progress: ProgressFn = _no_progress,
    **config_options: Any,
) -> System:
    """Create and train a system in-process (embedded mode, quickstart, tests). See :func:`training_config`."""
    config = training_config(architecture, **config_options)
    system = create_system(kg, architecture, name=name, config=config)
    return train_system(system, progress=progress)


def load_system_model(system: System, device: str | None = None) -> Any:
    """The trained model of ``system`` (eval mode) on ``device`` (default CUDA when available)."""
    from pooling.kge import load_checkpoint  # torch

    if not system.checkpoint_file:
        raise SystemServiceError(f"system {system.name!r} has no checkpoint (status {system.status})")
    model, _config, _metrics = load_checkpoint(storage_path(system.checkpoint_file), device=device)
    return model
