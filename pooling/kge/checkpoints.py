"""Save and load trained models: state_dict plus JSON-serialisable config and metrics.

The file is a plain ``torch.save`` of a dict holding only tensors and JSON types, so it loads with
``weights_only=True`` (no pickled code is executed when a checkpoint is opened). The container is checked first
(:func:`pooling.kge.torch_files.check_torch_archive`): a TorchScript archive or anything but a ``torch.save`` zip
is refused with one line before ``torch.load`` sees it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from .models import KGCModel, build_model
from .torch_files import TorchFileError, check_torch_archive
from .training import TrainingConfig, resolve_device

FORMAT_VERSION = 1


def save_checkpoint(path: str | os.PathLike[str], model: KGCModel, config: TrainingConfig | dict[str, Any],
                    metrics: dict[str, Any] | None = None) -> Path:
    """Write ``model`` (weights on CPU), its training ``config`` and ``metrics`` to ``path``.

    The model's resolved hyperparameters and entity/relation counts are stored too, so the model
    rebuilds identically even if architecture defaults change later. Raises ``TypeError`` if
    ``config`` or ``metrics`` is not JSON-serialisable.
    """
    config_dict = config.to_dict() if isinstance(config, TrainingConfig) else dict(config)
    metrics = dict(metrics or {})
    # Round-trip through JSON: fails early on non-serialisable values and normalises tuples to lists.
    config_dict = json.loads(json.dumps(config_dict))
    metrics = json.loads(json.dumps(metrics))
    payload = {
        "format_version": FORMAT_VERSION,
        "architecture": config_dict["architecture"],
        "num_entities": model.num_entities,
        "num_relations": model.num_relations,
        "model_hparams": json.loads(json.dumps(model.hparams)),
        "config": config_dict,
        "metrics": metrics,
        "state_dict": {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    torch.save(payload, temporary)
    os.replace(temporary, path)  # atomic: a crash never leaves a half-written checkpoint
    return path


def load_checkpoint(path: str | os.PathLike[str], device: str | torch.device | None = None
                    ) -> tuple[KGCModel, TrainingConfig, dict[str, Any]]:
    """Rebuild the model saved at ``path`` on ``device`` (default: CUDA if available, else CPU).

    Returns ``(model in eval mode, TrainingConfig, metrics)``. Raises :class:`TorchFileError` (a ``ValueError``,
    one line naming the file) for anything that is not such a checkpoint.
    """
    check_torch_archive(path)
    try:
        payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # weights_only refuses the pickle, unknown opcode...
        detail = " ".join(str(exc).split())[:300]
        raise TorchFileError(f"{path}: not a kgpool checkpoint ({type(exc).__name__}: {detail})") from None
    if not isinstance(payload, dict) or payload.get("format_version") != FORMAT_VERSION:
        version = payload.get("format_version") if isinstance(payload, dict) else None
        raise TorchFileError(f"{path}: not a kgpool checkpoint (format {version!r})")
    model = build_model(payload["architecture"], payload["num_entities"], payload["num_relations"],
                        **payload["model_hparams"])
    model.load_state_dict(payload["state_dict"])
    model.to(resolve_device(device)).eval()
    return model, TrainingConfig.from_dict(payload["config"]), payload["metrics"]
