"""Read models trained with PyKEEN 1.11 into kgpool's KGC models (Django-free, no pykeen import).

Two PyKEEN outputs are understood:

* a **training checkpoint** (``training_kwargs=dict(checkpoint_name=...)``): a ``torch.save`` dict with
  ``model_state_dict``, ``entity_to_id_dict``, ``relation_to_id_dict``, ``epoch``, ... It holds weights only,
  so the model class must be named (``model="TransE"``) and what no tensor records must be given in
  ``options``: TransE's ``scoring_fct_norm`` (and ``power_norm``), and ConvE's ``embedding_height`` when its
  weight shapes fit more than one image shape. PyKEEN's other per-model choices (no normaliser or dropout on
  the embeddings) are assumed at their defaults;
* a **save_to_directory** folder: ``trained_model.pkl`` (the pickled model) and
  ``training_triples/{entity,relation}_to_id.tsv.gz``. The pickle records the architecture and every option,
  which are all checked.

Neither file is given to ``torch.load`` nor unpickled for real: :mod:`pooling.kge.torch_files` refuses anything
but a plain ``torch.save`` archive (TorchScript archives, whose loading runs code, included), rebuilds tensors
and plain containers itself and turns every other class or function the pickle names into an inert
:class:`Opaque` placeholder that only records what it was given. No code from the file runs and pykeen need not
be installed.

Only interaction functions that map *exactly* onto ours are converted (same scores, up to float rounding):
TransE (p = 1 or 2), RotatE, DistMult, ComplEx, RESCAL, and ConvE / TuckER trained with inverse triples
(``create_inverse_triples=True``). Our models score a head question ``(?, r, t)`` as the tail question
``(t, r + R, ?)`` (see :mod:`pooling.kge.models`); PyKEEN's inverse relation ``2r + 1`` of ``r`` (stored as
``2r``) is exactly that. Without inverse triples PyKEEN scores head questions with the forward function, which
we reproduce with a derived reciprocal relation: TransE ``-r``, RotatE and ComplEx ``conj(r)``, DistMult ``r``,
RESCAL ``R^T``. ConvE and TuckER have no such reciprocal (TuckER's head batch norm is applied to the *asked*
entity), so they are refused without inverse triples. Everything else is refused with the reason: other
interactions, TransE with a squared L2 norm (``power_norm=True, p=2``), ConvE with several input channels or a
non-square kernel, representations with a normaliser or dropout applied when scoring.
"""
from __future__ import annotations

import csv
import gzip
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .torch_files import Opaque, TorchFileError, read_torch_archive

FORMAT = "pykeen"

#: PyKEEN model class -> our architecture.
PYKEEN_MODELS: dict[str, str] = {
    "TransE": "transe", "RotatE": "rotate", "DistMult": "distmult", "ComplEx": "complex", "RESCAL": "rescal",
    "ConvE": "conve", "TuckER": "tucker",
}
#: PyKEEN interaction class -> our architecture (an ``ERModel`` is recognised by its interaction).
PYKEEN_INTERACTIONS: dict[str, str] = {f"{name}Interaction": arch for name, arch in PYKEEN_MODELS.items()}
#: Why some well-known PyKEEN models are refused (the rest: "no kgpool architecture").
REFUSED_MODELS: dict[str, str] = {
    "TransH": "it projects entities on a relation hyperplane; kgpool's TransE has no projection",
    "TransR": "it projects entities with relation matrices; kgpool's TransE has no projection",
    "TransD": "it projects entities dynamically; kgpool's TransE has no projection",
    "HolE": "circular correlation is not one of kgpool's scoring functions",
    "SimplE": "it keeps separate head and tail embeddings per entity",
    "CP": "it keeps separate head and tail embeddings per entity",
    "QuatE": "quaternion products are not one of kgpool's scoring functions",
    "PairRE": "its paired relation vectors are not one of kgpool's scoring functions",
    "ConvKB": "its convolution over (h, r, t) differs from ConvE's",
    "ERMLP": "an MLP over (h, r, t) is not one of kgpool's scoring functions",
    "ERMLPE": "its MLP differs from ConvE's convolution",
    "MuRE": "its relation-specific scaling and biases are not one of kgpool's scoring functions",
    "NodePiece": "its entity representations are composed from anchors, not looked up",
    "CompGCN": "its representations come from message passing, not lookup tables",
    "RGCN": "its representations come from message passing, not lookup tables",
}
#: The options a training checkpoint may need, since no tensor records them.
CHECKPOINT_OPTIONS: dict[str, str] = {
    "scoring_fct_norm": "TransE (required): the p of the distance it was trained with, 1 or 2",
    "power_norm": "TransE: true when trained with power_norm=True (PyKEEN's default false)",
    "embedding_height": "ConvE: the image height, when the weight shapes allow more than one",
}


class ForeignCheckpointError(ValueError):
    """A file could not be read or does not map exactly onto a kgpool model; the message names the file."""


# ------------------------------------------------------------------------------------ reading the file
def load_pickle(path: Path) -> Any:
    """The object ``torch.save`` wrote at ``path``, read without running anything from it (see
    :mod:`pooling.kge.torch_files`): tensors and plain containers are real, other classes :class:`Opaque`."""
    try:
        return read_torch_archive(path)
    except TorchFileError as exc:
        raise ForeignCheckpointError(str(exc)) from None


# ------------------------------------------------------------------------------------ module trees
def _modules(obj: Any) -> dict[str, Any]:
    modules = obj.attributes.get("_modules") if isinstance(obj, Opaque) else None
    return dict(modules) if isinstance(modules, Mapping) else {}


def _module_state_dict(obj: Opaque, prefix: str = "") -> dict[str, Tensor]:
    """What ``nn.Module.state_dict()`` would give for a pickled module tree."""
    attributes = obj.attributes
    state: dict[str, Tensor] = {}
    for name, tensor in dict(attributes.get("_parameters") or {}).items():
        if tensor is not None:
            state[prefix + name] = tensor.detach()
    skipped = set(attributes.get("_non_persistent_buffers_set") or ())
    for name, tensor in dict(attributes.get("_buffers") or {}).items():
        if tensor is not None and name not in skipped:
            state[prefix + name] = tensor.detach()
    for name, child in _modules(obj).items():
        if isinstance(child, Opaque):
            state.update(_module_state_dict(child, f"{prefix}{name}."))
    return state


def _short(obj: Any) -> str:
    return (obj.qualname if isinstance(obj, (Opaque, type)) and hasattr(obj, "qualname") else type(obj).__name__)


# ------------------------------------------------------------------------------------ what was read
@dataclass
class PykeenModel:
    """A PyKEEN model as read from a file: weights in PyKEEN's id order and the labels of those ids."""

    path: Path
    kind: str  # "training checkpoint" or "save_to_directory"
    model_class: str  # PyKEEN's class name, e.g. "TransE" (or "ERModel")
    architecture: str  # ours
    inverse_triples: bool
    state: dict[str, Tensor]
    entity_labels: list[str]  # PyKEEN entity id -> label
    relation_labels: list[str]  # PyKEEN (real) relation id -> label
    settings: dict[str, Any] = field(default_factory=dict)  # p, power_norm, ConvE shapes, batch norm...
    extra: dict[str, Any] = field(default_factory=dict)  # provenance (JSON)

    def provenance(self) -> dict[str, Any]:
        return {"format": FORMAT, "file": str(self.path.resolve()), "kind": self.kind,
                "pykeen_model": self.model_class, "inverse_triples": self.inverse_triples,
                "settings": {k: v for k, v in self.settings.items() if isinstance(v, (int, float, bool, str))},
                **self.extra}


def read_pykeen(path: str | os.PathLike[str], *, model: str | None = None,
                options: Mapping[str, Any] | None = None) -> PykeenModel:
    """Read a PyKEEN training checkpoint file, a ``save_to_directory`` folder or its ``trained_model.pkl``.

    ``model`` names the PyKEEN model class (required for a training checkpoint, checked against a pickled
    model); ``options`` (see :data:`CHECKPOINT_OPTIONS`) give what a checkpoint does not record.
    Raises :class:`ForeignCheckpointError` naming the file and the problem.
    """
    path = Path(path)
    options = dict(options or {})
    unknown = sorted(set(options) - set(CHECKPOINT_OPTIONS))
    if unknown:
        raise ForeignCheckpointError(f"unknown option(s) {', '.join(unknown)}; PyKEEN imports accept "
                                     + "; ".join(f"{k} ({v})" for k, v in CHECKPOINT_OPTIONS.items()))
    if path.is_dir():
        pickled = path / "trained_model.pkl"
        if not pickled.is_file():
            raise ForeignCheckpointError(f"{path}: a directory without trained_model.pkl (expected PyKEEN's "
                                         "save_to_directory output, or give a training checkpoint file)")
        return _read_pickled_model(pickled, load_pickle(pickled), model, options)
    loaded = load_pickle(path)
    if isinstance(loaded, Mapping):
        return _read_training_checkpoint(path, loaded, model, options)
    if isinstance(loaded, Opaque) and "_modules" in loaded.attributes:
        return _read_pickled_model(path, loaded, model, options)
    raise ForeignCheckpointError(f"{path}: neither a PyKEEN training checkpoint (a dict with model_state_dict) "
                                 f"nor a pickled PyKEEN model (found {_short(loaded)})")


def _model_architecture(path: Path, model: str | None) -> tuple[str, str]:
    """(PyKEEN class name, our architecture) of a model name given by the user."""
    if not model:
        raise ForeignCheckpointError(
            f"{path}: a PyKEEN training checkpoint holds weights only; name its model class "
            f"(one of {', '.join(PYKEEN_MODELS)})")
    by_lower = {name.lower(): name for name in PYKEEN_MODELS}
    name = by_lower.get(model.lower())
    if name is None:
        refused = {k.lower(): (k, v) for k, v in REFUSED_MODELS.items()}.get(model.lower())
        if refused:
            raise ForeignCheckpointError(f"{path}: PyKEEN's {refused[0]} cannot be imported: {refused[1]}")
        raise ForeignCheckpointError(f"{path}: PyKEEN model {model!r} has no exact kgpool equivalent; supported: "
                                     f"{', '.join(PYKEEN_MODELS)}")
    return name, PYKEEN_MODELS[name]


def _read_training_checkpoint(path: Path, checkpoint: Mapping[str, Any], model: str | None,
                              options: dict[str, Any]) -> PykeenModel:
    if "model_state_dict" not in checkpoint:
        hint = " (it is a kgpool checkpoint: nothing to import)" if "format_version" in checkpoint else ""
        raise ForeignCheckpointError(f"{path}: not a PyKEEN training checkpoint: no model_state_dict{hint}")
    state = checkpoint["model_state_dict"]
    if not isinstance(state, Mapping) or not all(isinstance(v, Tensor) for v in state.values()):
        raise ForeignCheckpointError(f"{path}: model_state_dict is not a dict of tensors")
    entity_map, relation_map = checkpoint.get("entity_to_id_dict"), checkpoint.get("relation_to_id_dict")
    if entity_map is None or relation_map is None:
        raise ForeignCheckpointError(
            f"{path}: the checkpoint has no entity_to_id_dict / relation_to_id_dict (the model was trained on "
            "triples without labels, e.g. a CoreTriplesFactory), so its ids cannot be matched to the KG")
    entity_labels = _labels_from_dict(path, "entity_to_id_dict", entity_map)
    relation_labels = _labels_from_dict(path, "relation_to_id_dict", relation_map)
    class_name, architecture = _model_architecture(path, model)
    state = {str(k): v.detach() for k, v in state.items()}
    relation_rows = _shape_of(path, state, "relation_representations.0._embeddings.weight")[0]
    inverse = _inverse_from_rows(path, relation_rows, len(relation_labels))
    settings: dict[str, Any] = {}
    if architecture == "transe":
        if "scoring_fct_norm" not in options:
            raise ForeignCheckpointError(
                f"{path}: a TransE training checkpoint does not record the norm it was trained with; give it "
                "(option scoring_fct_norm=1 or 2, PyKEEN's default is 1; add power_norm=true if it was trained so)")
        settings["p"] = _option_number(path, options, "scoring_fct_norm", 1)
        settings["power_norm"] = _option_bool(path, options, "power_norm", False)
    elif "scoring_fct_norm" in options or "power_norm" in options:
        raise ForeignCheckpointError(f"{path}: scoring_fct_norm / power_norm only apply to TransE")
    if architecture == "conve":
        settings.update(_conve_shapes_from_state(path, state, options.get("embedding_height")))
    elif "embedding_height" in options:
        raise ForeignCheckpointError(f"{path}: embedding_height only applies to ConvE")
    extra = {"epoch": checkpoint.get("epoch") if isinstance(checkpoint.get("epoch"), int) else None}
    if checkpoint.get("checksum") and isinstance(checkpoint["checksum"], str):
        extra["checksum"] = checkpoint["checksum"]
    return PykeenModel(path, "training checkpoint", class_name, architecture, inverse, state, entity_labels,
                       relation_labels, settings, extra)


def _read_pickled_model(path: Path, obj: Any, model: str | None, options: dict[str, Any]) -> PykeenModel:
    if not isinstance(obj, Opaque) or not obj.qualname.startswith("pykeen."):
        raise ForeignCheckpointError(f"{path}: not a pickled PyKEEN model (found {_short(obj)})")
    if options:
        raise ForeignCheckpointError(f"{path}: a pickled model records its own settings; options "
                                     f"({', '.join(sorted(options))}) only apply to training checkpoints")
    class_name = obj.qualname.rsplit(".", 1)[-1]
    if class_name in REFUSED_MODELS:
        raise ForeignCheckpointError(f"{path}: PyKEEN's {class_name} cannot be imported: {REFUSED_MODELS[class_name]}")
    modules = _modules(obj)
    interaction = modules.get("interaction")
    interaction_name = _short(interaction).rsplit(".", 1)[-1]
    architecture = PYKEEN_INTERACTIONS.get(interaction_name)
    if architecture is None:
        raise ForeignCheckpointError(f"{path}: PyKEEN model {class_name} (interaction {interaction_name}) has no "
                                     f"exact kgpool equivalent; supported: {', '.join(PYKEEN_MODELS)}")
    if model:
        named, _arch = _model_architecture(path, model)
        if PYKEEN_MODELS[named] != architecture:
            raise ForeignCheckpointError(f"{path}: holds a {class_name} model, not {named}")
    attributes = obj.attributes
    inverse = bool(attributes.get("use_inverse_triples", False))
    inverter = attributes.get("relation_inverter")
    if inverse and _short(inverter) != "pykeen.inverse.DefaultRelationInverter":
        raise ForeignCheckpointError(f"{path}: unknown relation inverter {_short(inverter)} (only PyKEEN's "
                                     "DefaultRelationInverter, inverse of r = 2r + 1, is understood)")
    expected_entities = 2 if architecture == "conve" else 1
    for kind, expected in (("entity", expected_entities), ("relation", 1)):
        representations = _modules(modules.get(f"{kind}_representations"))
        if len(representations) != expected:
            raise ForeignCheckpointError(f"{path}: {class_name} has {len(representations)} {kind} representations, "
                                         f"expected {expected}")
        for index, representation in representations.items():
            _check_plain_embedding(path, f"{kind} representation {index}", representation)
    settings = _interaction_settings(path, architecture, interaction)
    state = _module_state_dict(obj)
    labels_folder = path.parent / "training_triples"
    entity_labels = _labels_from_tsv(labels_folder / "entity_to_id.tsv.gz")
    relation_labels = _labels_from_tsv(labels_folder / "relation_to_id.tsv.gz")
    relation_rows = _shape_of(path, state, "relation_representations.0._embeddings.weight")[0]
    if relation_rows != (2 if inverse else 1) * len(relation_labels):
        raise ForeignCheckpointError(
            f"{path}: {relation_rows} relation embeddings but {labels_folder / 'relation_to_id.tsv.gz'} names "
            f"{len(relation_labels)} relations ({'with' if inverse else 'without'} inverse triples)")
    extra: dict[str, Any] = {}
    if attributes.get("predict_with_sigmoid"):
        extra["predict_with_sigmoid"] = True  # a monotone transform of the scores PyKEEN ranks by: imported raw
    return PykeenModel(path, "save_to_directory", class_name, architecture, inverse, state, entity_labels,
                       relation_labels, settings, extra)


def _check_plain_embedding(path: Path, what: str, representation: Any) -> None:
    if _short(representation) != "pykeen.nn.representation.Embedding":
        raise ForeignCheckpointError(f"{path}: {what} is a {_short(representation)}, not a plain PyKEEN Embedding")
    attributes = representation.attributes
    normalizer = attributes.get("normalizer")
    if normalizer is not None:
        raise ForeignCheckpointError(f"{path}: {what} applies a normalizer ({_short(normalizer)}) when scoring; "
                                     "kgpool's models use the stored embeddings as they are")
    dropout = attributes.get("dropout") or _modules(representation).get("dropout")
    if dropout is not None:
        raise ForeignCheckpointError(f"{path}: {what} applies dropout to the embeddings; not supported")
    lookup = _modules(representation).get("_embeddings")
    if isinstance(lookup, Opaque) and lookup.attributes.get("max_norm") is not None:
        raise ForeignCheckpointError(f"{path}: {what} renormalises rows to max_norm when looked up; not supported")


def _interaction_settings(path: Path, architecture: str, interaction: Opaque) -> dict[str, Any]:
    attributes = interaction.attributes
    modules = _modules(interaction)
    settings: dict[str, Any] = {}
    if architecture == "transe":
        settings["p"] = attributes.get("p")
        settings["power_norm"] = bool(attributes.get("power_norm", False))
    elif architecture == "conve":
        shape = attributes.get("shape_info")
        info = shape.attributes if isinstance(shape, Opaque) else {}
        if not info and isinstance(shape, Opaque) and shape.args:
            info = dict(zip(("embedding_dim", "input_channels", "image_height", "image_width", "output_channels",
                             "kernel_height", "kernel_width"), shape.args))
        needed = ("input_channels", "image_height", "image_width", "kernel_height", "kernel_width")
        if not all(isinstance(info.get(key), int) for key in needed):
            raise ForeignCheckpointError(f"{path}: cannot read ConvE's shape information")
        settings.update({key: info[key] for key in needed})
        hr2d = [_short(layer).rsplit(".", 1)[-1] for layer in _modules(modules.get("hr2d")).values()]
        hr1d = [_short(layer).rsplit(".", 1)[-1] for layer in _modules(modules.get("hr1d")).values()]
        with_bn = (["BatchNorm2d", "Dropout", "Conv2d", "BatchNorm2d", "ReLU", "Dropout2d"],
                   ["Linear", "Dropout", "BatchNorm1d", "ReLU"])
        without_bn = (["Dropout", "Conv2d", "ReLU", "Dropout2d"], ["Linear", "Dropout", "ReLU"])
        if (hr2d, hr1d) == with_bn:
            settings["batch_norm"] = True
        elif (hr2d, hr1d) == without_bn:
            settings["batch_norm"] = False
        else:
            raise ForeignCheckpointError(f"{path}: ConvE layers {hr2d} / {hr1d} differ from PyKEEN 1.11's ConvE")
        for name, layer in _modules(modules.get("hr2d")).items():
            if _short(layer).endswith(".Conv2d"):
                conv = layer.attributes
                if tuple(conv.get("stride", (1, 1))) != (1, 1) or tuple(conv.get("padding", (0, 0))) != (0, 0) \
                        or tuple(conv.get("dilation", (1, 1))) != (1, 1) or conv.get("groups", 1) != 1:
                    raise ForeignCheckpointError(f"{path}: ConvE's convolution has stride/padding/dilation/groups "
                                                 "other than 1/0/1/1")
        _check_batch_norms(path, interaction)
    elif architecture == "tucker":
        settings["batch_norm"] = modules.get("head_batch_norm") is not None
        if (modules.get("head_relation_batch_norm") is not None) != settings["batch_norm"]:
            raise ForeignCheckpointError(f"{path}: TuckER with only one of its two batch norms")
        _check_batch_norms(path, interaction)
    return settings


def _check_batch_norms(path: Path, module: Opaque, prefix: str = "") -> None:
    for name, child in _modules(module).items():
        if not isinstance(child, Opaque):
            continue
        if _short(child).startswith("torch.nn.modules.batchnorm."):
            attributes = child.attributes
            if attributes.get("eps", 1e-5) != 1e-5 or attributes.get("affine", True) is not True \
                    or attributes.get("track_running_stats", True) is not True:
                raise ForeignCheckpointError(f"{path}: batch norm {prefix}{name} is not a default BatchNorm "
                                             "(eps 1e-5, affine, running statistics)")
        _check_batch_norms(path, child, f"{prefix}{name}.")


# ------------------------------------------------------------------------------------ labels
def _labels_from_dict(path: Path, what: str, mapping: Any) -> list[str]:
    if not isinstance(mapping, Mapping):
        raise ForeignCheckpointError(f"{path}: {what} is not a dict")
    try:
        pairs = sorted((int(index), str(label)) for label, index in mapping.items())
    except (TypeError, ValueError):
        raise ForeignCheckpointError(f"{path}: {what} must map labels to integer ids") from None
    return _dense_labels(f"{path} ({what})", pairs)


def _labels_from_tsv(path: Path) -> list[str]:
    """Labels of ``id<TAB>label`` rows (PyKEEN's ``*_to_id.tsv.gz``, header ``id label``)."""
    if not path.is_file():
        raise ForeignCheckpointError(f"{path}: no such file (PyKEEN's save_to_directory writes it next to "
                                     "trained_model.pkl, under training_triples/)")
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as stream:
            rows = list(csv.reader(stream, delimiter="\t"))
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise ForeignCheckpointError(f"{path}: cannot read the label file ({type(exc).__name__}: {exc})") from None
    if not rows or [cell.strip() for cell in rows[0]] != ["id", "label"]:
        raise ForeignCheckpointError(f"{path}:1: expected the header 'id<TAB>label'")
    pairs = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != 2 or not row[0].strip().lstrip("-").isdigit():
            raise ForeignCheckpointError(f"{path}:{number}: expected 'id<TAB>label', got {row!r}")
        pairs.append((int(row[0]), row[1]))
    return _dense_labels(str(path), sorted(pairs))


def _dense_labels(source: str, pairs: list[tuple[int, str]]) -> list[str]:
    ids = [index for index, _label in pairs]
    if ids != list(range(len(pairs))):
        raise ForeignCheckpointError(f"{source}: ids must be 0..{len(pairs) - 1}, each once")
    labels = [label for _index, label in pairs]
    if len(set(labels)) != len(labels):
        raise ForeignCheckpointError(f"{source}: a label has two ids")
    return labels


# ------------------------------------------------------------------------------------ options and shapes
def _option_number(path: Path, options: dict[str, Any], key: str, default: int) -> int:
    value = options.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ForeignCheckpointError(f"{path}: option {key} must be a number, got {value!r}") from None
    if not number.is_integer():
        raise ForeignCheckpointError(f"{path}: option {key} must be 1 or 2, got {value!r}")
    return int(number)


def _option_bool(path: Path, options: dict[str, Any], key: str, default: bool) -> bool:
    value = options.get(key, default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "y"):
        return True
    if text in ("0", "false", "no", "n"):
        return False
    raise ForeignCheckpointError(f"{path}: option {key} must be true or false, got {value!r}")


def _shape_of(path: Path, state: Mapping[str, Tensor], key: str) -> tuple[int, ...]:
    if key not in state:
        keys = ", ".join(sorted(state)[:6]) + (", ..." if len(state) > 6 else "") if state else "none"
        raise ForeignCheckpointError(f"{path}: the weights have no {key} (they have: {keys})")
    return tuple(state[key].shape)


def _inverse_from_rows(path: Path, rows: int, num_relations: int) -> bool:
    if rows == num_relations:
        return False
    if rows == 2 * num_relations:
        return True
    raise ForeignCheckpointError(f"{path}: {rows} relation embeddings for {num_relations} labelled relations "
                                 f"(expected {num_relations}, or {2 * num_relations} with inverse triples)")


def _conve_shapes_from_state(path: Path, state: Mapping[str, Tensor], height: Any) -> dict[str, Any]:
    batch_norm = "interaction.hr2d.0.running_mean" in state
    conv_key = "interaction.hr2d.2.weight" if batch_norm else "interaction.hr2d.1.weight"
    channels_out, channels_in, kernel_height, kernel_width = _shape_of(path, state, conv_key)
    dim = _shape_of(path, state, "entity_representations.0._embeddings.weight")[1]
    features = _shape_of(path, state, "interaction.hr1d.0.weight")[1]
    candidates = []
    for image_height in range(1, dim + 1):
        if (dim // channels_in) % image_height or dim % channels_in:
            continue
        image_width = dim // channels_in // image_height
        if channels_out * (2 * image_height - kernel_height + 1) * (image_width - kernel_width + 1) == features:
            candidates.append((image_height, image_width))
    if height is not None:
        try:
            height = int(height)
        except (TypeError, ValueError):
            raise ForeignCheckpointError(f"{path}: option embedding_height must be an integer") from None
        candidates = [c for c in candidates if c[0] == height]
        if not candidates:
            raise ForeignCheckpointError(f"{path}: embedding_height {height} does not fit the ConvE weight shapes")
    if not candidates:
        raise ForeignCheckpointError(f"{path}: no ConvE image shape fits the weights (dim {dim}, kernel "
                                     f"{kernel_height}x{kernel_width}, {features} hidden features)")
    if len(candidates) > 1:
        raise ForeignCheckpointError(
            f"{path}: the ConvE weights fit the image heights {', '.join(str(c[0]) for c in candidates)}; "
            "give the one it was trained with (option embedding_height)")
    image_height, image_width = candidates[0]
    return {"input_channels": channels_in, "image_height": image_height, "image_width": image_width,
            "kernel_height": kernel_height, "kernel_width": kernel_width, "batch_norm": batch_norm}


# ------------------------------------------------------------------------------------ conversion
@dataclass
class Converted:
    """Our model's architecture, constructor hyperparameters and state_dict (rows in the KG's index order)."""

    architecture: str
    hparams: dict[str, Any]
    state_dict: dict[str, Tensor]


def align_labels(ours: list[str], theirs: list[str], what: str, source: str) -> np.ndarray:
    """``rows[i]`` = the position in ``theirs`` of ``ours[i]``; raises naming missing and extra labels."""
    position = {label: i for i, label in enumerate(theirs)}
    missing = [label for label in ours if label not in position]
    known = set(ours)
    extra = [label for label in theirs if label not in known]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} {what} of the KG are not in the model (e.g. "
                         f"{', '.join(repr(x) for x in missing[:5])})")
        if extra:
            parts.append(f"{len(extra)} {what} of the model are not in the KG (e.g. "
                         f"{', '.join(repr(x) for x in extra[:5])})")
        raise ForeignCheckpointError(f"{source}: the {what} do not match the KG's: " + "; ".join(parts)
                                     + f". Labels must equal the KG's {what} keys.")
    return np.array([position[label] for label in ours], dtype=np.int64)


def convert(model: PykeenModel, entity_rows: np.ndarray, relation_rows: np.ndarray) -> Converted:
    """Our state_dict for ``model``; ``entity_rows[i]`` / ``relation_rows[i]`` = PyKEEN id of our entity /
    relation ``i`` (see :func:`align_labels`)."""
    path, state, settings = model.path, model.state, model.settings
    architecture = model.architecture
    entity_index = torch.as_tensor(entity_rows, dtype=torch.long)
    relation_index = torch.as_tensor(relation_rows, dtype=torch.long)

    def take(key: str) -> Tensor:
        if key not in state:
            raise ForeignCheckpointError(f"{path}: the {model.model_class} weights have no {key}")
        return state[key].detach().to(torch.float32)

    entity = take("entity_representations.0._embeddings.weight")
    relation = take("relation_representations.0._embeddings.weight")
    if entity.shape[0] != len(model.entity_labels):
        raise ForeignCheckpointError(f"{path}: {entity.shape[0]} entity embeddings but {len(model.entity_labels)} "
                                     "entity labels")
    used = {"entity_representations.0._embeddings.weight", "relation_representations.0._embeddings.weight"}
    if model.inverse_triples:
        forward_rows, inverse_rows = relation[0::2], relation[1::2]
    else:
        forward_rows, inverse_rows = relation, None
    if architecture in ("conve", "tucker") and not model.inverse_triples:
        raise ForeignCheckpointError(
            f"{path}: {model.model_class} was trained without inverse triples, so PyKEEN scores head questions "
            f"(?, r, t) with the tail-side function f(h, r, t) for every h; kgpool's {architecture} answers them "
            "with a reciprocal relation, which has no exact equivalent here. Train it with "
            "create_inverse_triples=True to import it.")
    entity = entity[entity_index]
    forward_rows = forward_rows[relation_index]
    inverse_rows = inverse_rows[relation_index] if inverse_rows is not None else None

    def relations(derive: Any) -> Tensor:
        return torch.cat([forward_rows, inverse_rows if inverse_rows is not None else derive(forward_rows)])

    out: dict[str, Tensor] = {}
    if architecture == "transe":
        p, power_norm = settings.get("p"), settings.get("power_norm")
        p = float(p) if isinstance(p, (int, float)) else p
        if p not in (1.0, 2.0):
            raise ForeignCheckpointError(f"{path}: TransE with scoring_fct_norm {settings.get('p')!r}; kgpool's "
                                         "TransE supports p = 1 and 2")
        if power_norm and p != 1.0:
            raise ForeignCheckpointError(f"{path}: TransE with power_norm=True scores -||h + r - t||^{p:g} (the "
                                         "squared distance); kgpool's TransE uses the plain norm (same ranks, "
                                         "different scores), so it is refused")
        hparams = {"dim": entity.shape[1], "p": int(p), "dropout": 0.0}
        out["entity.weight"] = entity
        out["relation.weight"] = relations(lambda r: -r)
    elif architecture == "rotate":
        dim = _complex_dim(path, entity, "entity")
        entity_complex, relation_complex = _interleaved(entity), _interleaved(relations(lambda r: r))
        if inverse_rows is None:  # derived reciprocal: conj(r)
            half = relation_complex.shape[0] // 2
            relation_complex[half:] = relation_complex[:half].conj()
        modulus = relation_complex.abs()
        deviation = float((modulus - 1).abs().max()) if modulus.numel() else 0.0
        if deviation > 1e-5:  # PyKEEN renormalises after every step: float32 rounding only
            raise ForeignCheckpointError(
                f"{path}: RotatE relation embeddings are not rotations (|r| differs from 1 by up to "
                f"{deviation:.3g}); PyKEEN keeps them unit-modulus with its default relation_constrainer, kgpool's "
                "RotatE stores phases only, so this model would score differently")
        out["entity.weight"] = torch.cat([entity_complex.real, entity_complex.imag], dim=1)
        out["phase.weight"] = torch.atan2(relation_complex.imag, relation_complex.real)
        hparams = {"dim": dim, "p": 2, "dropout": 0.0}
    elif architecture == "distmult":
        hparams = {"dim": entity.shape[1], "dropout": 0.0, "regularization": 0.0}
        out["entity.weight"] = entity
        out["relation.weight"] = relations(lambda r: r)
    elif architecture == "complex":
        dim = _complex_dim(path, entity, "entity")
        entity_complex = _interleaved(entity)
        relation_complex = _interleaved(relations(lambda r: r))
        if inverse_rows is None:  # derived reciprocal: conj(r)
            half = relation_complex.shape[0] // 2
            relation_complex[half:] = relation_complex[:half].conj()
        out["entity.weight"] = torch.cat([entity_complex.real, entity_complex.imag], dim=1)
        out["relation.weight"] = torch.cat([relation_complex.real, relation_complex.imag], dim=1)
        hparams = {"dim": dim, "dropout": 0.0, "regularization": 0.0}
    elif architecture == "rescal":
        dim = entity.shape[1]
        if relation.shape[1] != dim * dim:
            raise ForeignCheckpointError(f"{path}: RESCAL relation rows of {relation.shape[1]} numbers for "
                                         f"entity dimension {dim} (expected {dim * dim})")
        out["entity.weight"] = entity
        out["relation.weight"] = relations(lambda r: r.view(-1, dim, dim).transpose(1, 2).reshape(-1, dim * dim))
        hparams = {"dim": dim, "dropout": 0.0, "regularization": 0.0}
    elif architecture == "conve":
        hparams, conve_state, conve_used = _convert_conve(model, entity)
        out["entity.weight"] = entity
        out["relation.weight"] = relations(lambda r: r)
        bias = take("entity_representations.1._embeddings.weight")
        if bias.shape != (len(model.entity_labels), 1):
            raise ForeignCheckpointError(f"{path}: ConvE entity bias of shape {tuple(bias.shape)}")
        out["entity_bias"] = bias.view(-1)[entity_index]
        out.update(conve_state)
        used |= conve_used | {"entity_representations.1._embeddings.weight"}
    elif architecture == "tucker":
        core = take("interaction.core_tensor")
        entity_dim, relation_dim = entity.shape[1], relation.shape[1]
        if core.shape != (entity_dim, relation_dim, entity_dim):
            raise ForeignCheckpointError(f"{path}: TuckER core of shape {tuple(core.shape)} for entity dimension "
                                         f"{entity_dim} and relation dimension {relation_dim}")
        out["entity.weight"] = entity
        out["relation.weight"] = relations(lambda r: r)
        out["core"] = core.permute(1, 0, 2).contiguous()  # PyKEEN (d_e, d_r, d_e) -> ours (d_r, d_e, d_e)
        used.add("interaction.core_tensor")
        for ours, theirs in (("input_norm", "interaction.head_batch_norm"),
                             ("hidden_norm", "interaction.head_relation_batch_norm")):
            norm, keys = _batch_norm(state, theirs, entity_dim, settings.get("batch_norm", f"{theirs}.weight" in state))
            out.update({f"{ours}.{k}": v for k, v in norm.items()})
            used |= keys
        hparams = {"entity_dim": entity_dim, "relation_dim": relation_dim, "input_dropout": 0.0,
                   "hidden_dropout1": 0.0, "hidden_dropout2": 0.0}
    else:  # pragma: no cover - PYKEEN_MODELS lists only the above
        raise ForeignCheckpointError(f"{path}: unsupported architecture {architecture}")
    # regularisers and the loss hold no scoring parameters
    ignored = {key for key in state if key.startswith("loss.") or any("regularizer" in part for part in key.split("."))}
    unexpected = sorted(set(state) - used - ignored)
    if unexpected:
        raise ForeignCheckpointError(f"{path}: the {model.model_class} weights hold parameters kgpool's "
                                     f"{architecture} has no place for: {', '.join(unexpected[:6])}")
    return Converted(architecture, hparams, {key: value.contiguous() for key, value in out.items()})


def _complex_dim(path: Path, weight: Tensor, what: str) -> int:
    if weight.shape[1] % 2:
        raise ForeignCheckpointError(f"{path}: complex {what} embeddings need an even number of real columns")
    return weight.shape[1] // 2


def _interleaved(weight: Tensor) -> Tensor:
    """PyKEEN stores complex embeddings as (n, d, 2) [re, im] pairs flattened to (n, 2d)."""
    return torch.view_as_complex(weight.reshape(weight.shape[0], -1, 2).contiguous()).clone()


def _batch_norm(state: Mapping[str, Tensor], prefix: str, size: int, present: bool
                ) -> tuple[dict[str, Tensor], set[str]]:
    """Our BatchNorm state for PyKEEN's ``prefix`` BatchNorm, or an identity one when PyKEEN had none."""
    if present:
        keys = {f"{prefix}.{name}" for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")}
        missing = [key for key in keys if key not in state]
        if missing:
            raise ForeignCheckpointError(f"batch norm {prefix} lacks {', '.join(sorted(missing))}")
        return {key.rsplit(".", 1)[1]: state[key].detach().clone() for key in keys}, keys
    eps = 1e-5  # eval mode: (x - 0) / sqrt(1 + eps) * sqrt(1 + eps) + 0 = x (up to float rounding)
    return {"weight": torch.full((size,), math.sqrt(1.0 + eps)), "bias": torch.zeros(size),
            "running_mean": torch.zeros(size), "running_var": torch.ones(size),
            "num_batches_tracked": torch.zeros((), dtype=torch.long)}, set()


def _convert_conve(model: PykeenModel, entity: Tensor) -> tuple[dict[str, Any], dict[str, Tensor], set[str]]:
    path, state, settings = model.path, model.state, model.settings
    dim = entity.shape[1]
    if settings.get("input_channels") != 1:
        raise ForeignCheckpointError(f"{path}: ConvE with {settings.get('input_channels')} input channels; kgpool's "
                                     "ConvE stacks head and relation in one channel")
    kernel_height, kernel_width = settings["kernel_height"], settings["kernel_width"]
    if kernel_height != kernel_width:
        raise ForeignCheckpointError(f"{path}: ConvE with a {kernel_height}x{kernel_width} kernel; kgpool's ConvE "
                                     "uses square kernels")
    height, width = settings["image_height"], settings["image_width"]
    if height * width != dim:
        raise ForeignCheckpointError(f"{path}: ConvE image {height}x{width} for dimension {dim}")
    batch_norm = bool(settings.get("batch_norm", True))
    conv_prefix = "interaction.hr2d.2" if batch_norm else "interaction.hr2d.1"
    out: dict[str, Tensor] = {}
    used: set[str] = set()
    for ours, theirs in (("conv", conv_prefix), ("hidden", "interaction.hr1d.0")):
        for name in ("weight", "bias"):
            key = f"{theirs}.{name}"
            if key not in state:
                raise ForeignCheckpointError(f"{path}: the ConvE weights have no {key}")
            out[f"{ours}.{name}"] = state[key].detach().to(torch.float32).clone()
            used.add(key)
    channels = out["conv.weight"].shape[0]
    for ours, theirs, size in (("input_norm", "interaction.hr2d.0", 1), ("feature_norm", "interaction.hr2d.3", channels),
                               ("hidden_norm", "interaction.hr1d.2", dim)):
        norm, keys = _batch_norm(state, theirs, size, batch_norm)
        out.update({f"{ours}.{k}": v for k, v in norm.items()})
        used |= keys
    hparams = {"dim": dim, "embedding_height": height, "channels": channels, "kernel_size": kernel_height,
               "input_dropout": 0.0, "feature_dropout": 0.0, "hidden_dropout": 0.0}
    return hparams, out, used
