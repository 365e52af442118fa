"""Writes: KGC systems trained here (pooling.kge) and their checkpoints.

torch is imported lazily, inside the functions that train or score, never at module import.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import transaction
from django.utils.text import slugify

from pooling import task_names
from pooling.engine.architectures import ARCHITECTURE_NAMES
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
    strategy: str | None = None,
    negatives: int | None = None,
    valid_sample: int | None = None,
) -> dict[str, Any]:
    """A JSON training config: the architecture's recommended settings, then the given overrides.

    ``dim`` sets the embedding size (``entity_dim`` for TuckER). ``strategy`` "auto" (default), "1-n" or
    "negative-sampling", with ``negatives`` per batch and ``valid_sample`` validation triples (see
    ``pooling.kge.fitting.TrainingConfig``). Raises SystemServiceError for an unknown architecture.
    """
    from pooling.kge import TrainingConfig  # torch

    overrides: dict[str, Any] = {"seed": seed}
    for key, value in (("epochs", epochs), ("lr", lr), ("batch_size", batch_size), ("patience", patience),
                       ("eval_every", eval_every), ("device", device), ("num_threads", num_threads),
                       ("strategy", strategy), ("negatives", negatives), ("valid_sample", valid_sample)):
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
    from pooling.services.names import checked_name

    name = checked_name("system", name or slugify(architecture), SystemServiceError)
    if System.objects.filter(kg=kg, name=name).exists():
        raise SystemServiceError(f"a system named {name!r} already exists in {kg.name}")
    return System.objects.create(
        kg=kg, name=name, architecture=architecture.lower(), origin=System.Origin.TRAINED, config=config,
        status=System.Status.PENDING,
    )


def prepare_training(kg: KnowledgeGraph, architecture: str, *, name: str | None = None, config: dict[str, Any],
                     replace: bool = False, queued: bool = False) -> tuple[System, str]:
    """The system to train as ``name`` and a note for the user ("" for a new one).

    A new name gets a new pending system. An existing one of that name is trained again (same row, the new
    ``config``) when its earlier training failed, was interrupted or its process is gone (stale); a system
    queued for a worker (``queued``), one being trained by a live process and a ready one only with
    ``replace`` (a ready one that has rankings never: they would no longer match its model). Raises
    SystemServiceError saying why and what to do.
    """
    from pooling.services.trainers import training_owner

    name = name or slugify(architecture)
    existing = System.objects.filter(kg=kg, name=name).first()
    if existing is None:
        return create_system(kg, architecture, name=name, config=config), ""
    label = f"{kg.name}/{name}"
    status = existing.status
    if existing.origin != System.Origin.TRAINED:
        raise SystemServiceError(f"a system named {name!r} already exists in {kg.name} (imported); choose another "
                                 "--name")
    if status == System.Status.READY:
        mrr = f", test MRR {existing.test_mrr:.4f}" if existing.test_mrr is not None else ""
        if not replace:
            raise SystemServiceError(f"a system named {name!r} already exists in {kg.name} (trained and ready"
                                     f"{mrr}); choose another --name, or add --replace to train it again")
        if existing.rankings.exists():
            raise SystemServiceError(f"{label} has rankings (pools use them), which a new model would contradict; "
                                     "train it under another --name")
        note = f"{label} was ready{mrr}: training it again (--replace)"
    elif status == System.Status.TRAINING:
        owner = training_owner(existing)
        if owner is not None and owner.alive and not replace:
            raise SystemServiceError(
                f"{label} is being trained right now by {owner.description}; wait for it, or add --replace if that "
                "process is gone")
        note = (f"{label} is being trained by {owner.description}: training it again (--replace)"
                if owner is not None and owner.alive else
                f"the earlier training of {label} did not finish ({owner.description if owner else 'unknown'}): "
                "training it again from the start")
    elif status == System.Status.PENDING and queued and not replace:
        raise SystemServiceError(f"{label} is queued for a GPU worker since {existing.updated_at:%Y-%m-%d %H:%M} "
                                 "UTC; wait for it, or add --replace to queue it again")
    elif status == System.Status.FAILED:
        note = f"the earlier training of {label} failed ({existing.error or 'no message'}): training it again"
    else:
        note = f"the earlier training of {label} never started: training it now"
    # pending and no trainer: a process still running the earlier training can no longer finish it (its claim
    # is gone), and the next claim_training takes it
    System.objects.filter(pk=existing.pk).update(
        architecture=architecture.lower(), config=config, status=System.Status.PENDING, error="", trainer="")
    existing.refresh_from_db()
    return existing, note


def train_system(system: System, *, progress: ProgressFn = _no_progress) -> System:
    """Train ``system`` on its KG's train split (early stopping on valid MRR), checkpoint it, record MRRs.

    Idempotent: a system that is already ready is returned unchanged. The training is claimed for this process
    and beats a heartbeat while it runs (services.trainers); raises TrainingBusyError while another live process
    trains it. On error or interruption (Ctrl-C) the system is marked failed (with the message) and the exception
    re-raised.
    """
    from pooling.kge import TrainingConfig, save_checkpoint, train  # torch
    from pooling.kge.negative_sampling import held_out_mrr
    from pooling.kge.training import chosen_strategy
    from pooling.services.trainers import TrainingBusyError, claim_training, heartbeat, still_trained_by

    system.refresh_from_db()
    if system.status == System.Status.READY and system.checkpoint_file:
        return system
    me = claim_training(system)
    mine = System.objects.filter(pk=system.pk, trainer=me)
    kg = system.kg
    try:
        with heartbeat(system.pk, me):
            arrays = kg_triples(kg)
            config = TrainingConfig.from_dict(system.config)
            total_epochs = config.epochs

            def report(epoch_report: Any) -> None:
                progress(f"train {system.name}", epoch_report.epoch, total_epochs)

            result = train(config, arrays["train"], arrays["valid"], kg.num_entities, kg.num_relations,
                           known_triples=arrays["test"], progress=report)
            progress(f"train {system.name}", total_epochs, total_epochs)
            known = np.concatenate([arrays["train"], arrays["valid"], arrays["test"]])
            # A KG large enough for negative sampling gets its final MRRs from a seeded sample (valid_sample), as
            # its early stopping did: the whole test split against millions of entities is hours of CPU.
            sampled = chosen_strategy(config, arrays["train"], kg.num_entities, kg.num_relations) == "negative-sampling"
            valid_mrr = result.best_valid_mrr
            if valid_mrr is None and len(arrays["valid"]):
                valid_mrr, _ = held_out_mrr(result.model, arrays["valid"], known, kg.num_relations, config, sample=sampled)
            test_mrr, test_ranked = held_out_mrr(result.model, arrays["test"], known, kg.num_relations, config,
                                                 sample=sampled)
            test_mrr = test_mrr if test_ranked else None
            relative = f"systems/{kg.pk}-{kg.name}/{system.pk}-{system.name}.pt"
            metrics = {"valid_mrr": valid_mrr, "test_mrr": test_mrr, "test_triples_ranked": test_ranked,
                       "epochs_run": result.epochs_run, "best_epoch": result.best_epoch, "seconds": result.seconds}
        if not still_trained_by(system.pk, me):  # --replace handed it to another process meanwhile
            raise TrainingBusyError(f"{kg.name}/{system.name} was handed to another training while this one ran; "
                                    "its result is dropped")
        save_checkpoint(storage_path(relative), result.model, config, metrics)
    except TrainingBusyError:
        raise
    except KeyboardInterrupt:
        mine.update(status=System.Status.FAILED, error="interrupted (Ctrl-C or SIGTERM) before it finished")
        raise
    except Exception as exc:
        mine.update(status=System.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    with transaction.atomic():
        mine.update(
            status=System.Status.READY, checkpoint_file=relative, valid_mrr=valid_mrr, test_mrr=test_mrr, error="",
            config={**system.config, "epochs_run": result.epochs_run, "best_epoch": result.best_epoch,
                    "train_seconds": round(result.seconds, 3), "test_triples_ranked": test_ranked},
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


#: The last models a process loaded: (system pk, checkpoint path, its mtime and size, device) -> model.
_MODEL_CACHE: dict[tuple[Any, ...], Any] = {}
MODEL_CACHE_SIZE = 2  # a pool build ranks its systems' chunks in turn; a 5M-entity table is ~1 GiB at d=64


def cached_system_model(system: System, device: str | None = None) -> Any:
    """:func:`load_system_model`, loaded once per process (a Celery worker ranking a pool's chunks one after the
    other) and again only when the checkpoint file changes (retrained or re-imported: new mtime or size). The model
    is shared: callers score with it, never train it."""
    if not system.checkpoint_file:
        raise SystemServiceError(f"system {system.name!r} has no checkpoint (status {system.status})")
    path = storage_path(system.checkpoint_file)
    try:
        stat = path.stat()
    except OSError:
        return load_system_model(system, device)  # the loader's own error
    key = (system.pk, str(path), stat.st_mtime_ns, stat.st_size, str(device))
    model = _MODEL_CACHE.pop(key, None)
    if model is None:
        model = load_system_model(system, device)
        while len(_MODEL_CACHE) >= MODEL_CACHE_SIZE:
            _MODEL_CACHE.pop(next(iter(_MODEL_CACHE)))  # the least recently used
    _MODEL_CACHE[key] = model  # last = most recently used
    return model


REQUESTED = "requested_options"  # config key of a training asked for through the API, resolved by the worker


def request_training(kg: KnowledgeGraph, architecture: str, *, name: str | None = None,
                     options: dict[str, Any] | None = None) -> System:
    """A pending system whose training the worker resolves (``training_config``, torch) and runs, queued on commit:
    the web request that asks for it imports no torch. ``options`` are ``training_config``'s keyword arguments."""
    architecture = architecture.lower()
    if architecture not in ARCHITECTURE_NAMES:
        raise SystemServiceError(f"unknown architecture {architecture!r}; one of {', '.join(ARCHITECTURE_NAMES)}")
    system = create_system(kg, architecture, name=name, config={"architecture": architecture,
                                                                REQUESTED: dict(options or {})})
    from celery import signature

    system_id = system.pk
    transaction.on_commit(lambda: signature(task_names.TRAIN_REQUESTED_SYSTEM, args=(system_id,)).delay(),
                          robust=True)  # failures: on the row
    return system


def resolve_requested_training(system: System) -> System:
    """Turn an API training request into the full training config (in the worker; SystemServiceError for options
    the architecture does not take: the system is marked failed with the reason)."""
    system.refresh_from_db()
    requested = system.config.get(REQUESTED)
    if requested is None:
        return system
    try:
        config = training_config(system.architecture, **requested)
    except (SystemServiceError, TypeError) as exc:
        System.objects.filter(pk=system.pk).update(status=System.Status.FAILED, error=str(exc))
        raise SystemServiceError(str(exc)) from None
    System.objects.filter(pk=system.pk).update(config=config)
    system.refresh_from_db()
    return system
