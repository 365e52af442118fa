"""Writes: systems trained elsewhere, imported from their model checkpoints (PyKEEN) as kgpool checkpoints.

The foreign weights are converted into one of kgpool's own architectures (``pooling.kge.pykeen_format``) and saved
as a kgpool checkpoint, so the system is a READY model like a trained one (``origin`` trained, ``config["imported"]``
says where it came from): it ranks any sample, pools and evaluates through exactly the same code. torch is imported
lazily.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction

from pooling.models import KnowledgeGraph, System
from pooling.selectors.kg import kg_relation_keys, kg_triples
from pooling.selectors.pools import entity_keys
from pooling.services.rankings import RunImportError, _new_system_name
from pooling.storage import storage_path

#: Checkpoint formats understood (``--format``).
FORMATS = ("pykeen",)


class CheckpointImportError(RunImportError):
    """A checkpoint was refused; the message names the file and the reason. Nothing was written."""


def import_checkpoint(
    kg: KnowledgeGraph,
    path: Path | str,
    *,
    fmt: str = "pykeen",
    name: str | None = None,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    description: str = "",
    device: str | None = None,
) -> System:
    """Import the model saved at ``path`` (format ``fmt``) as a READY system of ``kg`` with a kgpool checkpoint.

    ``pykeen``: a training checkpoint file (``checkpoint_name=``; name its model class with ``model`` and give
    what it does not record in ``options``) or a ``save_to_directory`` folder / its ``trained_model.pkl``.
    Entity and relation labels must be exactly the KG's entity and relation keys. Architectures whose scores
    PyKEEN computes differently are refused with the reason. The system's validation and test filtered MRR are
    computed as for a trained system. Everything is checked before anything is written; the system row and its
    checkpoint file are written together (the file is removed again if the write fails). Default name:
    ``pykeen-<architecture>``.
    """
    from pooling.kge import TrainingConfig, build_model, filtered_mrr, resolve_device
    from pooling.kge.pykeen_format import ForeignCheckpointError, align_labels, convert, read_pykeen

    error = CheckpointImportError
    if fmt not in FORMATS:
        raise error(f"unknown checkpoint format {fmt!r}; supported: {', '.join(FORMATS)} (LibKGE checkpoints are not "
                    "supported: export a score matrix and use import_scores)")
    path = Path(path)
    if name is not None:
        name = _new_system_name(kg, name, error)
    if not path.exists():
        raise error(f"{path}: no such file or directory")
    try:
        foreign = read_pykeen(path, model=model, options=options)
        entity_rows = align_labels(entity_keys(kg), foreign.entity_labels, "entities", str(foreign.path))
        relation_rows = align_labels(kg_relation_keys(kg), foreign.relation_labels, "relations", str(foreign.path))
        converted = convert(foreign, entity_rows, relation_rows)
    except ForeignCheckpointError as exc:
        raise error(str(exc)) from None
    if name is None:
        name = _new_system_name(kg, f"pykeen-{converted.architecture}", error)
    try:
        kgc_model = build_model(converted.architecture, kg.num_entities, kg.num_relations, **converted.hparams)
        kgc_model.load_state_dict(converted.state_dict)
    except (ValueError, RuntimeError) as exc:
        raise error(f"{foreign.path}: the converted weights do not fit kgpool's {converted.architecture} "
                    f"({type(exc).__name__}: {exc})") from None
    kgc_model.to(resolve_device(device)).eval()

    config = {"architecture": converted.architecture, "hyperparameters": converted.hparams,
              "imported": foreign.provenance(), "description": description}
    batch_size = TrainingConfig(architecture=converted.architecture).eval_batch_size
    arrays = kg_triples(kg)
    known = np.concatenate([arrays["train"], arrays["valid"], arrays["test"]])
    valid_mrr = filtered_mrr(kgc_model, arrays["valid"], known, batch_size=batch_size) if len(arrays["valid"]) else None
    test_mrr = filtered_mrr(kgc_model, arrays["test"], known, batch_size=batch_size) if len(arrays["test"]) else None
    metrics = {"valid_mrr": valid_mrr, "test_mrr": test_mrr, "imported": foreign.provenance()}
    return _store(kg, name, converted.architecture, kgc_model, config, metrics)


def _store(kg: KnowledgeGraph, name: str, architecture: str, kgc_model: Any, config: dict[str, Any],
           metrics: dict[str, Any]) -> System:
    """The system row and its checkpoint, together: one transaction, the file removed again if it fails."""
    from pooling.kge import save_checkpoint

    relative = None
    try:
        with transaction.atomic():
            system = System.objects.create(
                kg=kg, name=name, architecture=architecture, origin=System.Origin.TRAINED,
                status=System.Status.READY, config=config, valid_mrr=metrics["valid_mrr"],
                test_mrr=metrics["test_mrr"],
            )
            relative = f"systems/{kg.pk}-{kg.name}/{system.pk}-{system.name}.pt"
            save_checkpoint(storage_path(relative), kgc_model, config, metrics)
            system.checkpoint_file = relative
            system.save(update_fields=["checkpoint_file", "updated_at"])
    except BaseException:
        if relative is not None:
            storage_path(relative).unlink(missing_ok=True)
        raise
    return system
