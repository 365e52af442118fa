"""Benchmark: filtered ranking of all FB15k-237 test questions vs PyKEEN 1.11.1 and the matmul bound.

Run with the bench venv (PyKEEN is a bench-only dependency, see bench/requirements.txt):

    nice .venv-bench/bin/python bench/ranking.py [--pykeen-triples 2048] [--batch-size 1024]

Model: DistMult d=200 with seeded random embeddings (entities unit-normalised). Queries are answer-wise,
one ranking per test triple and side, filtered against train + valid + test. Like PyKEEN's FB15k-237
dataset we drop the 28 test triples whose entities never occur in train: 20,438 triples = 40,876 queries
(the entity vocabulary stays all 14,541 entities of the three splits, as in the matmul bound of SPEC 7).
PyKEEN's RankBasedEvaluator(filtered=True) runs on the same embeddings wrapped in a pykeen DistMult, on a
seeded subset of the test triples when --pykeen-triples < all (its time is extrapolated linearly).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.engine.questions import HEAD, TAIL, known_answers, questions_from_triples  # noqa: E402
from pooling.engine.ranking import rank  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "fb15k-237"
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
    entity_np = entity.numpy()

    def score(anchor: torch.Tensor, relation_ids: torch.Tensor, side: int) -> torch.Tensor:
        # DistMult is symmetric in head and tail: <e_anchor, w_r, e_x> for every x, either side.
        # On CPU numpy's sgemm measured ~2x faster than torch's here, so the product is taken in numpy.
        query = (entity[anchor] * relation[relation_ids]).numpy()
        return torch.from_numpy(query @ entity_np.T)

    return score


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--pykeen-triples", type=int, default=2048, help="test triples for PyKEEN (0 = skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    splits, num_entities, num_relations = load_splits()
    train_entities = np.unique(splits["train"][:, [0, 2]])
    seen = np.isin(splits["test"][:, 0], train_entities) & np.isin(splits["test"][:, 2], train_entities)
    test = splits["test"][seen]
    num_queries = 2 * test.shape[0]
    print(f"FB15k-237: {num_entities} entities, {num_relations} relations, {test.shape[0]} test triples "
          f"({splits['test'].shape[0] - test.shape[0]} dropped: entity unseen in train) -> {num_queries} queries; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    generator = torch.Generator().manual_seed(args.seed)
    entity = torch.nn.functional.normalize(torch.randn(num_entities, DIM, generator=generator), dim=1)
    relation = torch.randn(num_relations, DIM, generator=generator)

    # --- the bare matmul bound (numpy, all 2 x 20,466 rows, as in SPEC 7) ---------------------------
    rows = np.random.default_rng(args.seed).standard_normal((2 * splits["test"].shape[0], DIM)).astype(np.float32)
    entity_np = entity.numpy()
    rows @ entity_np[:100].T  # warm-up
    start = time.perf_counter()
    product = rows @ entity_np.T
    matmul_s = time.perf_counter() - start
    matmul_qps = rows.shape[0] / matmul_s
    print(f"matmul bound  {rows.shape[0]} x {DIM} @ {DIM} x {num_entities}: {matmul_s:6.2f} s "
          f"= {matmul_qps:9,.0f} queries/s")
    del product
    # the same product in batch-size row blocks (no 2.4 GB output to fault in): the tighter bound
    start = time.perf_counter()
    for first in range(0, rows.shape[0], args.batch_size):
        rows[first : first + args.batch_size] @ entity_np.T
    blocked_s = time.perf_counter() - start
    blocked_qps = rows.shape[0] / blocked_s
    print(f"matmul bound  same, in {args.batch_size}-row blocks: {blocked_s:6.2f} s = {blocked_qps:9,.0f} queries/s")
    del rows

    # --- ours ----------------------------------------------------------------------------------------
    plain_score_fn = distmult_score_fn(entity, relation)
    score_seconds = [0.0]

    def score_fn(anchor: torch.Tensor, relation_ids: torch.Tensor, side: int) -> torch.Tensor:
        begin = time.perf_counter()
        scores = plain_score_fn(anchor, relation_ids, side)
        score_seconds[0] += time.perf_counter() - begin
        return scores
    start = time.perf_counter()
    questions, answers = questions_from_triples(test)
    filter_sets = known_answers(questions, splits["train"], splits["valid"], test)
    prepare_s = time.perf_counter() - start
    result = rank(score_fn, questions, num_entities=num_entities, filter=filter_sets, targets=answers,
                  k=10, batch_size=args.batch_size)
    ours_s = time.perf_counter() - start
    ours_qps = num_queries / ours_s
    print(f"ours          {len(questions)} unique questions, {answers.nnz} answer rankings, "
          f"{filter_sets.nnz} filter entries: {ours_s:6.2f} s (questions+filter {prepare_s:.2f} s) "
          f"= {ours_qps:9,.0f} queries/s ({ours_qps / matmul_qps:.2f} x matmul bound)")
    print(f"ours          of which scoring (matmul) {score_seconds[0]:.2f} s, engine (filter, top-k, ranks, ties) "
          f"{ours_s - score_seconds[0] - prepare_s:.2f} s; {ours_qps / blocked_qps:.2f} x the blocked matmul bound")
    ours_ranks = answer_ranks(result, questions, test, num_entities, num_relations)
    print(f"ours          MRR {np.mean(1 / np.concatenate(list(ours_ranks.values()))):.5f} (realistic)")

    if args.pykeen_triples <= 0:
        return
    # --- PyKEEN --------------------------------------------------------------------------------------
    import pykeen
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.models import DistMult
    from pykeen.triples import CoreTriplesFactory

    take = min(args.pykeen_triples, test.shape[0])
    subset = np.sort(np.random.default_rng(args.seed).choice(test.shape[0], size=take, replace=False))
    factory = CoreTriplesFactory.create(torch.from_numpy(test), num_entities=num_entities, num_relations=num_relations)
    model = DistMult(triples_factory=factory, embedding_dim=DIM, random_seed=args.seed)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.copy_(entity)
        model.relation_representations[0]._embeddings.weight.copy_(relation)
    model.eval()
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
    print(f"speed-up      ours / PyKEEN = {ours_qps / pykeen_qps:,.0f} x; ours / matmul bound = "
          f"{ours_qps / matmul_qps:.2f}; target >= 1/3 of the bound: {'met' if ours_qps >= matmul_qps / 3 else 'NOT met'}")
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
