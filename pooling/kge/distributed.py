"""Multi-process / multi-host negative-sampling training with PyTorch DistributedDataParallel (torchrun).

    python -m torch.distributed.run --standalone --nproc_per_node 2 -m pooling.kge.distributed \\
        --data datasets/umls --architecture distmult --dim 64 --epochs 50 --out umls-distmult.pt

Several hosts: the same command on each with ``--nnodes N --node_rank I --rdzv_endpoint HOST:PORT`` instead of
``--standalone`` (torchrun's own options). The backend is gloo on CPU and NCCL on GPUs (one per local rank).
Every rank reads the dataset folder (``train/valid/test.txt``, :func:`pooling.engine.kgfiles.read_kg`) and trains
on its shard of each epoch (:mod:`pooling.kge.negative_sampling`); rank 0 writes the checkpoint, in the format of
:func:`pooling.kge.checkpoints.save_checkpoint` (``load_checkpoint`` / ``manage.py import_checkpoint`` read it).
Django-free: no settings or database needed.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from pooling.engine.kgfiles import read_kg

from .checkpoints import save_checkpoint
from .evaluation import filtered_mrr
from .fitting import TrainingConfig
from .negative_sampling import EVAL_SCORES, train_negative_sampling


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder with train.txt, valid.txt, test.txt")
    parser.add_argument("--architecture", required=True)
    parser.add_argument("--out", type=Path, required=True, help="checkpoint path (written by rank 0)")
    parser.add_argument("--dim", type=int, help="embedding size (entity_dim for TuckER)")
    parser.add_argument("--hyperparameters", type=json.loads, default={}, help="JSON object of model settings")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--batch-size", type=int, help="triples per rank and batch")
    parser.add_argument("--lr", type=float)
    parser.add_argument("--negatives", type=int)
    parser.add_argument("--eval-every", type=int)
    parser.add_argument("--patience", type=int)
    parser.add_argument("--valid-sample", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads per process (default 1)")
    parser.add_argument("--rank-checkpoints", action="store_true",
                        help="every rank also writes OUT.rank<K>.pt (to check that the ranks agree)")
    return parser.parse_args(argv)


def config_from(args: argparse.Namespace) -> TrainingConfig:
    hyperparameters = dict(args.hyperparameters)
    if args.dim is not None:
        hyperparameters["entity_dim" if args.architecture.lower() == "tucker" else "dim"] = args.dim
    overrides = {"seed": args.seed, "hyperparameters": hyperparameters, "strategy": "negative-sampling",
                 "num_threads": args.threads}
    for key in ("epochs", "batch_size", "lr", "negatives", "eval_every", "patience", "valid_sample"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    return TrainingConfig.for_architecture(args.architecture, **overrides)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    use_cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    try:
        rank = dist.get_rank()
        config = config_from(args)
        if use_cuda:
            local_rank = int(os.environ.get("LOCAL_RANK", 0))
            torch.cuda.set_device(local_rank)
            config.device = f"cuda:{local_rank}"
        else:
            config.device = "cpu"
        kg = read_kg(args.data)
        splits, num_entities, num_relations = kg.splits, len(kg.entity_keys), len(kg.relation_keys)
        result = train_negative_sampling(config, splits["train"], splits["valid"], num_entities, num_relations,
                                         known_triples=splits["test"], progress=None, distributed=True)
        metrics = {"valid_mrr": result.best_valid_mrr, "epochs_run": result.epochs_run,
                   "best_epoch": result.best_epoch, "seconds": result.seconds, "world_size": dist.get_world_size()}
        if args.rank_checkpoints:
            save_checkpoint(args.out.with_name(f"{args.out.stem}.rank{rank}.pt"), result.model, config, metrics)
        if rank == 0:
            known = np.concatenate([splits["train"], splits["valid"], splits["test"]])
            if len(splits["test"]) and num_entities * len(splits["test"]) <= 64 * EVAL_SCORES:
                metrics["test_mrr"] = filtered_mrr(result.model, splits["test"], known,
                                                   batch_size=max(1, min(1024, EVAL_SCORES // num_entities)))
            save_checkpoint(args.out, result.model, config, metrics)
            print(json.dumps({"checkpoint": str(args.out), **metrics}), flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
