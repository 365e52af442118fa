"""The set-up the FB15k-237 evaluation benches share (bench/evaluate_fb15k237.py, bench/protocols_fb15k237.py):
an embedded SQLite database in a var dir, FB15k-237 with the published sample, trained systems; each step is
skipped when ``--keep``'s var dir already holds its result, and timed when it runs."""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
T = TypeVar("T")


def embedded_django(keep: str | None, threads: int) -> Path:
    """Django on a fresh (or the kept) embedded SQLite var dir, migrated; torch on ``threads`` threads."""
    var = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="kgpool-bench-"))
    os.environ["KGPOOL_VAR_DIR"] = str(var)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import torch

    torch.set_num_threads(threads)
    print(f"var dir {var}; torch threads {threads}")
    return var


def timed(label: str, fn: Callable[[], T], width: int = 60) -> T:
    start = time.perf_counter()
    value = fn()
    print(f"{label:<{width}s} {time.perf_counter() - start:8.2f} s", flush=True)
    return value


def published_sample():
    """FB15k-237 and its published sample (1,023 triples), imported unless the database has them."""
    from pooling.models import KnowledgeGraph, Sample
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import sample_from_file

    kg = KnowledgeGraph.objects.filter(name="fb15k-237").first() or timed(
        "import FB15k-237 (310,116 triples)", lambda: import_kg("fb15k-237", DATA / "fb15k-237"))
    return Sample.objects.filter(kg=kg, name="published").first() or timed(
        "published sample (1,023 triples)",
        lambda: sample_from_file(kg, DATA / "fb15k-237-pooled" / "sample_idxs.txt", name="published"))


def trained_system(kg, architecture: str, name: str, *, epochs: int, dim: int, threads: int, **training):
    """The READY system ``name`` of ``kg``, trained (1-N, CPU, batch 1,024, seed 0) unless it is there."""
    from pooling.models import System
    from pooling.services.systems import train_new_system

    System.objects.filter(kg=kg, name=name).exclude(status=System.Status.READY).delete()  # an interrupted one
    return System.objects.filter(kg=kg, name=name, status=System.Status.READY).first() or timed(
        f"train {architecture} d={dim}, {epochs} epoch(s) (+ filtered valid/test MRR)",
        lambda: train_new_system(kg, architecture, name=name, epochs=epochs, dim=dim, seed=0, eval_every=epochs,
                                 batch_size=1024, device="cpu", num_threads=threads, **training))
