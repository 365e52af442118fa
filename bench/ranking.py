"""Benchmark: filtered ranking of all FB15k-237 test questions vs PyKEEN 1.11.1 and the matmul bound.

Run with the bench venv (PyKEEN is a bench-only dependency, see bench/requirements.txt):

    nice .venv-bench/bin/python bench/ranking.py [--pykeen-triples 2048] [--batch-size 1024]
    python bench/ranking.py --device cuda --batch-size 8192   # on a GPU host (see the README for figures)

Model: DistMult d=200 with seeded random embeddings (entities unit-normalised). Queries are answer-wise,
one ranking per test triple and side, filtered against train + valid + test. Like PyKEEN's FB15k-237
dataset we drop the 28 test triples whose entities never occur in train: 20,438 triples = 40,876 queries
(the entity vocabulary stays all 14,541 entities of the three splits, as in the matmul bound of SPEC 7).
PyKEEN's RankBasedEvaluator(filtered=True) runs on the same embeddings wrapped in a pykeen DistMult, on a
seeded subset of the test triples when --pykeen-triples < all (its time is extrapolated linearly).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.engine.questions import HEAD, TAIL, known_answers, questions_from_triples  # noqa: E402
from pooling.engine.ranking import rank  # noqa: E402

DATA = Path(os.environ.get("KGPOOL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "fb15k-237"
DIM = 200


def load_splits() -> tuple[dict[str, np.ndarray], int, int]:
    rows = {name: [line.split("\t") for line in (DATA / f"{name}.txt").read_text().splitlines() if line]
            for name in ("train", "valid", "test")}
    entities = sorted({e for split in rows.values() for h, _, t in split for e in (h, t)})
    relations = sorted({r for split in rows.values() for _, r, _ in split})
    entity_id = {e: i for i, e in enumerate(entities)}
    relation_id = {r: i for i, r in enumerate(relations)}
    splits = {
        name: np.array([[entity_id[h], relation_id[r], entity_id[t]] for h, r, t in split], dtype=np.int64)
        for name, split in rows.items()
    }
    return splits, len(entities), len(relations)


def distmult_score_fn(entity: torch.Tensor, relation: torch.Tensor):
    if entity.device.type != "cpu":
        def score_on_device(anchor: torch.Tensor, relation_ids: torch.Tensor, side: int) -> torch.Tensor:
            return (entity[anchor] * relation[relation_ids]) @ entity.T

        return score_on_device
    entity_np = entity.numpy()

    def score(anchor: torch.Tensor, relation_ids: torch.Tensor, side: int) -> torch.Tensor:
        # DistMult is symmetric in head and tail: <e_anchor, w_r, e_x> for every x, either side.
        # On CPU numpy's sgemm measured ~2x faster than torch's here, so the product is taken in numpy.
        query = (entity[anchor] * relation[relation_ids]).numpy()
        return torch.from_numpy(query @ entity_np.T)

    return score


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_bound(num_rows: int, entity: torch.Tensor, batch_size: int, seed: int) -> tuple[float, float]:
    """Queries/s of the bare (num_rows x d) @ (d x E) product on entity's device: whole, and in row blocks."""
    device = entity.device
    rows = np.random.default_rng(seed).standard_normal((num_rows, DIM)).astype(np.float32)
    if device.type == "cpu":  # numpy, as SPEC 7 measured it
        left, right = rows, entity.numpy().T
    else:
        left, right = torch.from_numpy(rows).to(device), entity.T
    left[:100] @ right  # warm-up
    synchronize(device)
    start = time.perf_counter()
    product = left @ right
    synchronize(device)
    whole_s = time.perf_counter() - start
    del product
    # the same product in batch-size row blocks (no 2.4 GB output to fault in): the tighter bound
    start = time.perf_counter()
    for first in range(0, num_rows, batch_size):
        left[first : first + batch_size] @ right
    synchronize(device)
    blocked_s = time.perf_counter() - start
    print(f"matmul bound  {num_rows} x {DIM} @ {DIM} x {entity.shape[0]} on {device}: {whole_s:6.3f} s "
          f"= {num_rows / whole_s:11,.0f} queries/s; in {batch_size}-row blocks: {blocked_s:6.3f} s "
          f"= {num_rows / blocked_s:11,.0f} queries/s")
    return num_rows / whole_s, num_rows / blocked_s


def answer_ranks(result, questions, test: np.ndarray, num_entities: int, num_relations: int) -> dict[int, np.ndarray]:
    """Realistic rank of every test triple's answer, per side, in test-triple order."""
    question_keys = questions.keys(num_entities, num_relations)
    target_keys = result.target_questions() * num_entities + result.targets.values
    realistic = result.ranks("realistic")
    out = {}
    for side, anchor_col, answer_col in ((HEAD, 2, 0), (TAIL, 0, 2)):
        keys = (side * num_relations + test[:, 1]) * num_entities + test[:, anchor_col]
        question = np.searchsorted(question_keys, keys)
        out[side] = realistic[np.searchsorted(target_keys, question * num_entities + test[:, answer_col])]
    return out


def run_ours(entity: torch.Tensor, relation: torch.Tensor, splits: dict[str, np.ndarray], test: np.ndarray,
             num_entities: int, num_relations: int, batch_size: int, matmul_qps: float, blocked_qps: float,
             profile: bool = False):
    """Our engine on entity's device: questions, filter, scores, top-10, ranks.

    Returns (end-to-end queries/s, ranking-alone queries/s, realistic ranks per side, the timed score_fn)."""
    device = entity.device
    plain_score_fn = distmult_score_fn(entity, relation)
    score_seconds = [0.0]

    def score_fn(anchor: torch.Tensor, relation_ids: torch.Tensor, side: int) -> torch.Tensor:
        begin = time.perf_counter()
        scores = plain_score_fn(anchor, relation_ids, side)
        synchronize(device)
        score_seconds[0] += time.perf_counter() - begin
        return scores

    num_queries = 2 * test.shape[0]
    # warm-up: one untimed run (first kernel launches load CUDA modules; allocators fill their pools)
    warm_questions, warm_answers = questions_from_triples(test)
    rank(plain_score_fn, warm_questions, num_entities=num_entities, targets=warm_answers, k=10,
         filter=known_answers(warm_questions, splits["train"], splits["valid"], test), batch_size=batch_size,
         device=device)
    synchronize(device)
    start = time.perf_counter()
    questions, answers = questions_from_triples(test)
    filter_sets = known_answers(questions, splits["train"], splits["valid"], test)
    prepare_s = time.perf_counter() - start
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with torch.profiler.profile(activities=activities) if profile else contextlib.nullcontext() as profiler:
        result = rank(score_fn, questions, num_entities=num_entities, filter=filter_sets, targets=answers,
                      k=10, batch_size=batch_size, device=device)
        synchronize(device)
        ours_s = time.perf_counter() - start
    if profiler is not None:
        sort_by = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        print(profiler.key_averages().table(sort_by=sort_by, row_limit=20))
        print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    ours_qps = num_queries / ours_s
    engine_s = ours_s - prepare_s
    print(f"ours ({device.type:4}) {len(questions)} unique questions, {answers.nnz} answer rankings, "
          f"{filter_sets.nnz} filter entries, batch {batch_size}: {ours_s:6.3f} s (questions+filter {prepare_s:.3f} s) "
          f"= {ours_qps:11,.0f} queries/s ({ours_qps / matmul_qps:.2f} x matmul bound)")
    print(f"ours ({device.type:4}) ranking alone (scores, filter, top-k, ranks, ties) {engine_s:.3f} s "
          f"= {num_queries / engine_s:11,.0f} queries/s = {num_queries / engine_s / blocked_qps:.2f} x the blocked "
          f"matmul bound, of which scoring {score_seconds[0]:.3f} s")
    ranks = answer_ranks(result, questions, test, num_entities, num_relations)
    print(f"ours ({device.type:4}) MRR {np.mean(1 / np.concatenate(list(ranks.values()))):.6f} (realistic)")
    return ours_qps, num_queries / engine_s, ranks, score_fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--pykeen-triples", type=int, default=2048, help="test triples for PyKEEN (0 = skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--profile", action="store_true", help="print torch.profiler tables of our run")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:N]; on a GPU the CPU run is repeated to "
                        "compare ranks")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    splits, num_entities, num_relations = load_splits()
    train_entities = np.unique(splits["train"][:, [0, 2]])
    seen = np.isin(splits["test"][:, 0], train_entities) & np.isin(splits["test"][:, 2], train_entities)
    test = splits["test"][seen]
    num_queries = 2 * test.shape[0]
    gpu = f", {torch.cuda.get_device_name(device)}" if device.type == "cuda" else ""
    print(f"FB15k-237: {num_entities} entities, {num_relations} relations, {test.shape[0]} test triples "
          f"({splits['test'].shape[0] - test.shape[0]} dropped: entity unseen in train) -> {num_queries} queries; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads{gpu}")

    generator = torch.Generator().manual_seed(args.seed)
    entity = torch.nn.functional.normalize(torch.randn(num_entities, DIM, generator=generator), dim=1)
    relation = torch.randn(num_relations, DIM, generator=generator)

    # the bare matmul bound: all 2 x 20,466 rows, as in SPEC 7
    entity_on_device = entity.to(device)
    matmul_qps, blocked_qps = matmul_bound(2 * splits["test"].shape[0], entity_on_device, args.batch_size, args.seed)
    ours_qps, engine_qps, ours_ranks, score_fn = run_ours(
        entity_on_device, relation.to(device), splits, test, num_entities, num_relations, args.batch_size,
        matmul_qps, blocked_qps, args.profile)
    if device.type == "cuda":
        print(f"target        on a GPU within 2x of its bound: ranking alone {engine_qps / blocked_qps:.2f} x the "
              f"blocked bound -> {'met' if engine_qps >= blocked_qps / 2 else 'NOT met'}")
        cpu_matmul_qps, cpu_blocked_qps = matmul_bound(2 * splits["test"].shape[0], entity, 1024, args.seed)
        cpu_qps, _, cpu_ranks, _ = run_ours(entity, relation, splits, test, num_entities, num_relations, 1024,
                                            cpu_matmul_qps, cpu_blocked_qps)
        diff = np.concatenate([np.abs(cpu_ranks[side] - ours_ranks[side]) for side in (HEAD, TAIL)])
        print(f"cuda vs cpu   {ours_qps / cpu_qps:.1f} x faster end to end; realistic ranks: max |diff| "
              f"{diff.max():g}, {np.count_nonzero(diff)} of {diff.size} differ (float rounding of near-ties)")

    if args.pykeen_triples <= 0:
        return
    # --- PyKEEN --------------------------------------------------------------------------------------
    try:
        import pykeen
        from pykeen.evaluation import RankBasedEvaluator
        from pykeen.models import DistMult
        from pykeen.triples import CoreTriplesFactory
    except ImportError:
        print("PyKEEN       not installed here (bench/requirements.txt): comparison skipped")
        return

    take = min(args.pykeen_triples, test.shape[0])
    subset = np.sort(np.random.default_rng(args.seed).choice(test.shape[0], size=take, replace=False))
    factory = CoreTriplesFactory.create(torch.from_numpy(test), num_entities=num_entities, num_relations=num_relations)
    model = DistMult(triples_factory=factory, embedding_dim=DIM, random_seed=args.seed)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.copy_(entity)
        model.relation_representations[0]._embeddings.weight.copy_(relation)
    model.to(device).eval()
    evaluator = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    start = time.perf_counter()
    evaluator.evaluate(
        model,
        torch.from_numpy(test[subset]),
        batch_size=args.batch_size,
        additional_filter_triples=[torch.from_numpy(splits["train"]), torch.from_numpy(splits["valid"]),
                                   torch.from_numpy(test)],
        use_tqdm=False,
    )
    pykeen_s = time.perf_counter() - start
    pykeen_qps = 2 * take / pykeen_s
    note = "" if take == test.shape[0] else f", seeded subset of {take} triples, all {num_queries} queries ~ " \
        f"{num_queries / pykeen_qps:.0f} s extrapolated"
    print(f"PyKEEN {pykeen.get_version()} RankBasedEvaluator(filtered=True): {2 * take} queries in {pykeen_s:6.2f} s "
          f"= {pykeen_qps:9,.1f} queries/s{note}")
    target = "" if device.type == "cuda" else \
        f"; target >= 1/3 of the bound: {'met' if ours_qps >= matmul_qps / 3 else 'NOT met'}"
    print(f"speed-up      ours / PyKEEN on {device.type} = {ours_qps / pykeen_qps:,.0f} x; ours / matmul bound = "
          f"{ours_qps / matmul_qps:.2f}{target}")
    def compare(evaluator, shared: np.ndarray, what: str) -> None:
        diffs = []
        for side, label in ((HEAD, "head"), (TAIL, "tail")):
            theirs = np.concatenate(evaluator.ranks[(label, "realistic")])
            diffs.append(np.abs(theirs - ours_ranks[side][shared]))
        diff = np.concatenate(diffs)
        print(f"ranks         realistic ranks vs PyKEEN ({what}) on {diff.size} shared queries: "
              f"max |diff| = {diff.max():g}, {np.count_nonzero(diff)} differ")

    compare(evaluator, subset, "its own DistMult scoring: float rounding differs")
    # the same evaluator fed our exact score tensors: ranks must agree exactly
    check = subset[: min(512, subset.size)]

    def predict(hrt_batch: torch.Tensor, target: str, **_: object) -> torch.Tensor:
        if target == "tail":
            return score_fn(hrt_batch[:, 0], hrt_batch[:, 1], TAIL)
        return score_fn(hrt_batch[:, 2], hrt_batch[:, 1], HEAD)

    model.predict = predict  # type: ignore[method-assign]
    same_scores = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    same_scores.evaluate(model, torch.from_numpy(test[check]), batch_size=args.batch_size,
                         additional_filter_triples=[torch.from_numpy(splits["train"]),
                                                    torch.from_numpy(splits["valid"]), torch.from_numpy(test)],
                         use_tqdm=False)
    compare(same_scores, check, "identical score tensors")


if __name__ == "__main__":
    main()
