"""Shared by the trec_eval tests: random qrels / runs, and brute-force per-query references.

The brute-force functions follow trec_eval 10's C loops document by document (m_rbp.c, m_rbp_resid.c,
m_unjudged.c, m_yaap.c, m_ndcg_p.c, m_relstring.c) on a ranked list of relevance values, independently of
the vectorised code in evaluation.core: -1 marks a doc absent from the qrels, -2 one judged < 0.
"""
from __future__ import annotations

import math

import numpy as np

NONPOOL, UNJUDGED = -1, -2


def random_campaign(seed: int, *, queries: int = 60, ties: bool = True, docs: int = 120,
                    labels=(-1, 0, 0, 0, 1, 1, 2, 3)) -> tuple[dict, dict]:
    """Qrels / run dicts with the awkward cases: qrels-only and run-only queries, all non-relevant
    queries, graded and negative labels, relevant docs never retrieved, unjudged retrieved docs and, with
    ``ties``, scores taking 4 values (the docid tie-break decides)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(queries):
        qid = f"q{q}"
        if q % 9:
            judged = rng.choice(docs, size=int(rng.integers(1, 40)), replace=False)
            values = rng.choice(labels, size=len(judged))
            if q % 13 == 0:
                values[:] = 0
            qrels[qid] = {f"d{d}": int(v) for d, v in zip(judged, values)}
        if q % 11:
            retrieved = rng.choice(docs, size=int(rng.integers(1, 90)), replace=False)
            scores = rng.integers(0, 4, size=len(retrieved)) if ties else rng.random(len(retrieved))
            run[qid] = {f"d{d}": float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


def trec_order(scores: dict[str, float]) -> list[str]:
    """Docs by score descending, ties by docid descending (trec_eval's form_res_rels.c)."""
    return sorted(scores, key=lambda doc: (-scores[doc], [-b for b in doc.encode()] + [1]))


def ranked_relevance(judgments: dict[str, int], scores: dict[str, float], *, max_retrieved: int | None = None,
                     judged_only: bool = False) -> list[int]:
    """The retrieved docs' relevance in rank order, as trec_eval's results_rel_list."""
    order = trec_order(scores)[:max_retrieved]
    values = [judgments[d] if d in judgments and judgments[d] >= 0 else
              (UNJUDGED if d in judgments else NONPOOL) for d in order]
    return [v for v in values if v >= 0] if judged_only else values


def level_counts(judgments: dict[str, int]) -> list[int]:
    """rel_levels: docs judged at each level 0 .. max (levels < 0 not counted)."""
    levels = [v for v in judgments.values() if v >= 0]
    counts = [0] * (max(levels) + 1 if levels else 0)
    for value in levels:
        counts[value] += 1
    return counts


def brute_rbp(ranked: list[int], judgments: dict[str, int], p: float = 0.9) -> float:
    counts = level_counts(judgments)
    gains = {level: float(level) for level in range(len(counts))}
    low, high = min(gains.values(), default=0.0), max(gains.values(), default=0.0)
    if low < 0 or high > 1:
        gains = {level: (g - low) / (high - low) for level, g in gains.items()}
    total, weight = 0.0, 1.0
    for rel in ranked:
        total += gains.get(rel, 0.0) * weight
        weight *= p
    return (1 - p) * total


def brute_rbp_resid(ranked: list[int], p: float = 0.9) -> float:
    unjudged, total, weight = 0, 0.0, 1.0
    for rel in ranked:
        if rel < 0:
            unjudged += 1
            total += weight
        weight *= p
    return weight + (1 - p) * total if unjudged else 0.0


def brute_unj(ranked: list[int], cutoff: int) -> float:
    return sum(1 for rel in ranked[:cutoff] if rel in (NONPOOL, UNJUDGED)) / cutoff


def brute_yaap(ranked: list[int], judgments: dict[str, int], level: int = 1) -> float:
    num_rel = sum(1 for v in judgments.values() if v >= level)
    found, total = 0, 0.0
    for i, rel in enumerate(ranked):
        if rel >= level:
            found += 1
            total += found / (i + 1)
    return math.log((1 + total) / (1 + num_rel - total))


def brute_ndcg_p(ranked: list[int], judgments: dict[str, int], level: int = 1) -> float:
    dcg = sum((rel if i == 0 else rel / math.log2(i + 1)) for i, rel in enumerate(ranked) if rel > 0)
    ideal_gains = sorted((v for v in judgments.values() if v > 0), reverse=True)
    ideal = sum((g if i == 0 else g / math.log2(i + 1)) for i, g in enumerate(ideal_gains))
    return dcg / ideal if any(rel >= level for rel in ranked) else 0.0


def brute_relstring(ranked: list[int], length: int = 10) -> str:
    def char(rel: int) -> str:
        return ">" if rel > 9 else str(rel) if rel >= 0 else "-" if rel == NONPOOL else "."
    return "".join(char(rel) for rel in ranked[:length])


def brute_mean_rank(ranked: list[int], judgments: dict[str, int], level: int = 1) -> float:
    if not any(v >= level for v in judgments.values()):
        return math.nan
    return next((i + 1.0 for i, rel in enumerate(ranked) if rel >= level), len(ranked) + 1.0)
