"""Benchmark: macro metrics (SPEC 7) of kgpool vs pytrec_eval and ranx on a FB15k-237-sized run.

    nice -n 19 .venv/bin/python bench/metrics.py [--questions 22850] [--depth 1000] [--systems 13]

A seeded synthetic campaign: 22,850 questions x 1,000 filtered candidates x 13 systems over 14,541
entities; every question has 1-10 relevant answers and 0-10 judged negatives; each system retrieves
each judged entity with some probability at a log-uniform rank; scores are distinct (no ties, so
all three tools share one convention). Measures: map_cut_20, ndcg_cut_20, recip_rank, P_10.

Timed, per system:
- ours / arrays (sorted top-k): JudgedRanking.from_topk(candidates, judged...) + evaluate;
- ours / arrays + scores: the same with trec_eval ordering recomputed from the score matrix;
- ours / judged ranks: JudgedRanking.from_judged_ranks (the engine hands over ranks) + evaluate;
- ours / dicts: Qrels.from_dict + Run.from_dict + judged_ranking_from_trec + evaluate;
- ours / file: read_qrels + read_run + judged_ranking_from_trec + evaluate (file written untimed);
- pytrec_eval: RelevanceEvaluator(qrels dict) + evaluate(run dict)   [the dicts are given];
- ranx: Qrels(dict) + Run(dict) + evaluate.
- all_trec (unless --skip-all-trec): every per-query measure of trec_eval's ``-m all_trec`` (98 values per
  question: P, recall, iprec_at_recall, Rprec_mult, ndcg and its variants, G, rbp, unj, set measures, ...)
  from arrays, and pytrec_eval's all_trec on the reference systems, with their agreement.
The reference tools (and our dict/file paths) run on --reference-systems systems only (default 1)
because each needs a 22.85M-entry dict of dicts; their per-system time is the mean over those.
"""
from __future__ import annotations

import argparse
import gc
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.core import measure_names  # noqa: E402
from evaluation.core.macro import JudgedRanking, evaluate  # noqa: E402
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec, read_qrels, read_run  # noqa: E402

MEASURES = ["map_cut_20", "ndcg_cut_20", "recip_rank", "P_10"]
PYTREC_MEASURES = {"map_cut.20", "ndcg_cut.20", "recip_rank", "P.10"}
RANX_MEASURES = {"map_cut_20": "map@20", "ndcg_cut_20": "ndcg@20", "recip_rank": "mrr", "P_10": "precision@10"}
MAX_JUDGED = 20  # latent ids 0..19 are the judged entities of a question
ALL_TREC = [m for m in measure_names.request(["all_trec"]) if m.base not in ("runid", "num_q")]
#: pytrec_eval's all_trec (its runid and relstring are not numbers)
PYTREC_ALL_TREC = {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
                   "ndcg", "relative_P", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                   "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"}


class Campaign:
    """Seeded synthetic judgments; entity of latent id l for question q is (a_q * l + b_q) mod E."""

    def __init__(self, questions: int, entities: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.questions, self.entities = questions, entities
        coprime = np.array([a for a in range(2, 5000) if math.gcd(a, entities) == 1])
        self.scale = rng.choice(coprime, size=questions)
        self.shift = rng.integers(0, entities, size=questions)
        self.num_rel = rng.integers(1, 11, size=questions)
        self.num_nonrel = rng.integers(0, 11, size=questions)
        judged = self.num_rel + self.num_nonrel
        self.judged_query = np.repeat(np.arange(questions), judged)
        starts = np.concatenate(([0], np.cumsum(judged)[:-1]))
        self.judged_latent = np.arange(len(self.judged_query)) - np.repeat(starts, judged)
        self.judged_rel = (self.judged_latent < self.num_rel[self.judged_query]).astype(np.int64)
        self.judged_doc = self.entity(self.judged_query, self.judged_latent)

    def entity(self, query: np.ndarray, latent: np.ndarray) -> np.ndarray:
        return (self.scale[query] * latent + self.shift[query]) % self.entities

    def system(self, depth: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Sorted top-k of one system: candidate entity ids (int32) and distinct descending scores."""
        rng = np.random.default_rng(seed)
        q = self.questions
        # Background latents >= MAX_JUDGED, distinct within a row: shifted sample modulo the range.
        pool = self.entities - MAX_JUDGED
        base = rng.choice(pool, size=depth, replace=False)
        latent = MAX_JUDGED + (base[None, :] + rng.integers(0, pool, size=(q, 1))) % pool
        # Each judged entity is retrieved with some probability at a log-uniform position.
        retrieved = rng.random(len(self.judged_query)) < np.where(self.judged_rel == 1, 0.8, 0.9)
        position = np.minimum(np.exp(rng.random(len(self.judged_query)) * math.log(depth)).astype(np.int64) - 1,
                              depth - 1)
        latent[self.judged_query[retrieved], position[retrieved]] = self.judged_latent[retrieved]
        candidates = self.entity(np.arange(q)[:, None], latent).astype(np.int32)
        scores = (depth - np.arange(depth, dtype=np.float64))[None, :] + rng.random((q, 1))
        return candidates, scores


def _ranks(campaign: Campaign, candidates: np.ndarray) -> np.ndarray:
    rows = candidates[campaign.judged_query]
    match = rows == campaign.judged_doc[:, None].astype(rows.dtype)
    return np.where(match.any(axis=1), match.argmax(axis=1) + 1.0, np.inf)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def names_for(entities: int) -> list[str]:
    return [f"/m/e{i:05d}" for i in range(entities)]


def qrels_dict(campaign: Campaign, names: list[str]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for q, d, r in zip(campaign.judged_query.tolist(), campaign.judged_doc.tolist(), campaign.judged_rel.tolist()):
        qrels.setdefault(f"q{q:05d}", {})[names[d]] = r
    return qrels


def run_dict(candidates: np.ndarray, scores: np.ndarray, names: list[str]) -> dict[str, dict[str, float]]:
    lookup = names.__getitem__
    return {f"q{q:05d}": dict(zip(map(lookup, candidates[q].tolist()), scores[q].tolist()))
            for q in range(len(candidates))}


def write_run_file(path: Path, candidates: np.ndarray, scores: np.ndarray, names: list[str]) -> None:
    name_array = np.array(names, dtype=object)
    depth = candidates.shape[1]
    ranks = " ".join(str(i + 1) for i in range(depth)).split()
    with open(path, "w") as out:
        for q in range(len(candidates)):
            qid = f"q{q:05d}"
            docs = name_array[candidates[q]]
            out.write("".join(f"{qid} Q0 {d} {k} {s!r} ours\n" for d, k, s in zip(docs, ranks, scores[q].tolist())))


def write_qrels_file(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    with open(path, "w") as out:
        for qid, judged in qrels.items():
            out.write("".join(f"{qid} 0 {d} {r}\n" for d, r in judged.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=22850)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--entities", type=int, default=14541)
    parser.add_argument("--systems", type=int, default=13)
    parser.add_argument("--reference-systems", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-ranx", action="store_true")
    parser.add_argument("--skip-file", action="store_true")
    parser.add_argument("--skip-all-trec", action="store_true")
    args = parser.parse_args()

    campaign = Campaign(args.questions, args.entities, args.seed)
    print(f"campaign: {args.questions} questions x {args.depth} candidates x {args.systems} systems, "
          f"{len(campaign.judged_query)} judgments ({int(campaign.judged_rel.sum())} relevant); "
          f"measures {', '.join(MEASURES)}")
    times: dict[str, list[float]] = {}
    agreement: dict[str, float] = {}
    names = names_for(args.entities)
    reference_qrels = qrels_dict(campaign, names) if args.reference_systems else None

    def record(label: str, seconds: float) -> None:
        times.setdefault(label, []).append(seconds)

    for system in range(args.systems):
        candidates, scores = campaign.system(args.depth, seed=1000 + system)
        judged, t = timed(JudgedRanking.from_topk, candidates, campaign.judged_query, campaign.judged_doc,
                          campaign.judged_rel)
        ours, t_eval = timed(evaluate, judged, MEASURES)
        record("ours: arrays (sorted top-k)", t + t_eval)

        judged_s, t = timed(JudgedRanking.from_topk, candidates, campaign.judged_query, campaign.judged_doc,
                            campaign.judged_rel, scores=scores)
        ours_s, t_eval = timed(evaluate, judged_s, MEASURES)
        record("ours: arrays + scores (trec order)", t + t_eval)

        if not args.skip_all_trec:
            judged_all, t = timed(JudgedRanking.from_topk, candidates, campaign.judged_query, campaign.judged_doc,
                                  campaign.judged_rel)
            ours_all, t_eval = timed(evaluate, judged_all, ALL_TREC)
            record(f"ours: arrays, all_trec ({len(ALL_TREC)} values)", t + t_eval)

        ranks = _ranks(campaign, candidates)  # what the ranking engine hands over (untimed)
        relevant = campaign.judged_rel == 1

        def from_ranks() -> dict[str, np.ndarray]:
            jr = JudgedRanking.from_judged_ranks(
                args.questions, campaign.judged_query[relevant], ranks[relevant],
                campaign.judged_query[~relevant], ranks[~relevant], num_ret=args.depth)
            return evaluate(jr, MEASURES)

        ours_r, t = timed(from_ranks)
        record("ours: judged ranks (engine path)", t)
        for name in MEASURES:
            agreement[f"ours arrays vs arrays+scores: {name}"] = max(
                agreement.get(f"ours arrays vs arrays+scores: {name}", 0.0),
                float(np.abs(ours[name] - ours_s[name]).max()), float(np.abs(ours[name] - ours_r[name]).max()))

        if system < args.reference_systems:
            run = run_dict(candidates, scores, names)

            def ours_from_dicts() -> dict[str, np.ndarray]:
                jr = judged_ranking_from_trec(Qrels.from_dict(reference_qrels), Run.from_dict(run))
                return evaluate(jr, MEASURES)

            ours_d, t = timed(ours_from_dicts)
            record("ours: dicts", t)

            import pytrec_eval

            def with_pytrec() -> dict:
                return pytrec_eval.RelevanceEvaluator(reference_qrels, PYTREC_MEASURES).evaluate(run)

            reference, t = timed(with_pytrec)
            record("pytrec_eval: dicts", t)
            qids = [f"q{q:05d}" for q in range(args.questions)]
            for name in MEASURES:
                theirs = np.array([reference[qid][name] for qid in qids])
                agreement[f"ours vs pytrec_eval: {name}"] = max(
                    float(np.abs(ours[name] - theirs).max()), float(np.abs(ours_d[name] - theirs).max()))
            del reference
            gc.collect()

            if not args.skip_all_trec:
                reference, t = timed(lambda: pytrec_eval.RelevanceEvaluator(reference_qrels, PYTREC_ALL_TREC)
                                     .evaluate(run))
                record("pytrec_eval: dicts, all_trec", t)
                worst, compared = 0.0, 0
                for name, values in ours_all.items():
                    if name in reference[qids[0]]:
                        theirs = np.array([reference[qid][name] for qid in qids])
                        worst = max(worst, float(np.nanmax(np.abs(values - theirs))))
                        compared += len(theirs)
                agreement[f"ours vs pytrec_eval: all_trec ({compared} values)"] = worst
                del reference
                gc.collect()

            if not args.skip_ranx:
                import ranx

                def with_ranx() -> dict:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        return ranx.evaluate(ranx.Qrels(reference_qrels), ranx.Run(run),
                                             list(RANX_MEASURES.values()), return_mean=False,
                                             make_comparable=False)

                if system == 0:
                    with warnings.catch_warnings():  # warm numba's JIT on a tiny input, untimed
                        warnings.simplefilter("ignore")
                        ranx.evaluate(ranx.Qrels({"q": {"a": 1}}), ranx.Run({"q": {"a": 1.0, "b": 0.5}}),
                                        list(RANX_MEASURES.values()))
                reference_ranx, t = timed(with_ranx)
                record("ranx: dicts", t)
                order = np.arange(args.questions)  # zero-padded ids: insertion order == sorted order
                for name, ranx_name in RANX_MEASURES.items():
                    agreement[f"ours vs ranx: {name}"] = float(np.abs(ours[name][order] - reference_ranx[ranx_name]).max())
                del reference_ranx
                gc.collect()

            if not args.skip_file:
                with tempfile.TemporaryDirectory() as folder:
                    run_path, qrels_path = Path(folder) / "run.txt", Path(folder) / "qrels.txt"
                    write_run_file(run_path, candidates, scores, names)
                    write_qrels_file(qrels_path, reference_qrels)

                    def ours_from_file() -> dict[str, np.ndarray]:
                        jr = judged_ranking_from_trec(read_qrels(qrels_path), read_run(run_path))
                        return evaluate(jr, MEASURES)

                    ours_f, t = timed(ours_from_file)
                    record("ours: run file", t)
                    for name in MEASURES:
                        agreement[f"ours file vs arrays: {name}"] = float(np.abs(ours_f[name] - ours[name]).max())
            del run
            gc.collect()
        print(f"  system {system + 1}/{args.systems} done", file=sys.stderr, flush=True)

    base = np.mean(times["ours: arrays (sorted top-k)"])
    print(f"\n{'path':<38} {'systems':>7} {'s/system':>9} {'x ours arrays':>14}")
    for label, values in times.items():
        mean = float(np.mean(values))
        print(f"{label:<38} {len(values):>7} {mean:>9.3f} {mean / base:>14.1f}")
    if "pytrec_eval: dicts" in times:
        pytrec = np.mean(times["pytrec_eval: dicts"])
        print(f"\nspeed-up vs pytrec_eval: arrays {pytrec / base:.0f}x, "
              f"arrays+scores {pytrec / np.mean(times['ours: arrays + scores (trec order)']):.0f}x, "
              f"engine ranks {pytrec / np.mean(times['ours: judged ranks (engine path)']):.0f}x")
        if "ranx: dicts" in times:
            ranx_time = np.mean(times["ranx: dicts"])
            print(f"speed-up vs ranx: arrays {ranx_time / base:.0f}x")
        total = {label: np.mean(v) * args.systems for label, v in times.items()}
        print(f"all {args.systems} systems (reference tools extrapolated from {args.reference_systems}): "
              + ", ".join(f"{label} {seconds:.1f} s" for label, seconds in total.items()))
    print("\nagreement (max abs difference over questions):")
    for label, value in agreement.items():
        print(f"  {label:<48} {value:.2e}")


if __name__ == "__main__":
    main()
