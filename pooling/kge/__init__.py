"""Django-free PyTorch KGC models, their 1-N and negative-sampling training and checkpoints.

Importing this package imports torch; the rest of the project imports it lazily (inside functions).
"""
from .checkpoints import load_checkpoint, save_checkpoint
from .evaluation import filtered_mrr, filtered_ranks, model_score_fn
from .models import (
    ARCHITECTURES,
    RESCAL,
    ComplEx,
    ConvE,
    DistMult,
    KGCModel,
    RotatE,
    TransE,
    TuckER,
    architecture_class,
    build_model,
)
from .negative_sampling import train_negative_sampling
from .training import EpochReport, TrainingConfig, TrainingResult, resolve_device, seed_everything, train

__all__ = [
    "ARCHITECTURES",
    "RESCAL",
    "ComplEx",
    "ConvE",
    "DistMult",
    "EpochReport",
    "KGCModel",
    "RotatE",
    "TrainingConfig",
    "TrainingResult",
    "TransE",
    "TuckER",
    "architecture_class",
    "build_model",
    "filtered_mrr",
    "filtered_ranks",
    "load_checkpoint",
    "model_score_fn",
    "resolve_device",
    "save_checkpoint",
    "seed_everything",
    "train",
    "train_negative_sampling",
]
