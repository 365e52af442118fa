"""The ``train`` stage of bench/scale.py (issue 18): one epoch of negative-sampling training on the synthetic KG.

Reads the ``generate`` stage's train/valid/test.txt (no database), then for each architecture trains one epoch
with :func:`pooling.kge.negative_sampling.train_negative_sampling` (sampled softmax, shared negatives, sparse
embeddings + SparseAdam) and prints its time, triples/s and memory; then times one early-stopping evaluation
(filtered MRR of a seeded sample of validation triples against every entity). Settings by environment:
``SCALE_TRAIN_ARCHITECTURES`` (default ``distmult,transe``), ``SCALE_TRAIN_DIM`` (64), ``SCALE_TRAIN_BATCH``
(1024 triples), ``SCALE_TRAIN_NEGATIVES`` (256), ``SCALE_TRAIN_THREADS`` (torch CPU threads, default 1),
``SCALE_TRAIN_VALID`` (validation triples ranked, 200; 0 skips the evaluation).
"""
from __future__ import annotations

import os
import resource
import time
from typing import Any


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"SCALE_TRAIN_{name}", default)


def stage_train(context: Any) -> None:
    import numpy as np
    import scale  # bench/scale.py's helpers (this stage is registered there)
    import torch

    from pooling.engine.kgfiles import read_kg
    from pooling.kge.evaluation import filtered_mrr
    from pooling.kge.fitting import TrainingConfig
    from pooling.kge.negative_sampling import (
        EVAL_SCORES,
        relevant_filter,
        train_negative_sampling,
        validation_sample,
    )

    torch.set_num_threads(int(_setting("THREADS", "1")))
    started = time.perf_counter()
    kg = read_kg(context.folder)
    splits, entities, relations = kg.splits, len(kg.entity_keys), len(kg.relation_keys)
    train = splits["train"]
    print(f"train/read       {time.perf_counter() - started:7.2f} s  {entities:,} entities, {relations:,} relations, "
          f"{len(train):,} training triples", flush=True)
    dim, batch = int(_setting("DIM", "64")), int(_setting("BATCH", "1024"))
    negatives = int(_setting("NEGATIVES", "256"))
    for architecture in _setting("ARCHITECTURES", "distmult,transe").split(","):
        config = TrainingConfig.for_architecture(architecture, hyperparameters={"dim": dim}, epochs=1, batch_size=batch,
                                                 negatives=negatives, device="cpu", strategy="negative-sampling")
        result, measure = scale.measured(
            lambda config=config: train_negative_sampling(config, train, None, entities, relations, progress=False))
        scale.report(f"train/{architecture}", measure, len(train), "triples")
        table = sum(parameter.numel() for parameter in result.model.parameters()) * 4
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"                 d={dim}, batch {batch} triples, {negatives} shared negatives, "
              f"{torch.get_num_threads()} thread(s); parameters {table / 2**20:.0f} MiB (+ SparseAdam 2x), "
              f"process max RSS {peak / 2**20:.0f} MiB; loss {result.history[-1]['loss']:.3f}", flush=True)
        valid_count = int(_setting("VALID", "200"))
        if valid_count and len(splits["valid"]):
            sample = validation_sample(splits["valid"], valid_count, seed=0)
            known = np.concatenate([train, splits["valid"], splits["test"]])
            model = result.model
            mrr, measure = scale.measured(lambda: filtered_mrr(
                model, sample, relevant_filter(sample, known, relations),
                batch_size=max(1, min(1024, EVAL_SCORES // entities))))
            scale.report(f"valid/{architecture}", measure, len(sample), "triples")
            print(f"                 filtered MRR {mrr:.4f} on {len(sample):,} validation triples "
                  f"(random model ~{np.log(entities) / entities:.1e})", flush=True)
        del result
