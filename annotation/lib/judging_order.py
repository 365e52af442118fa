"""Judging orders of a pool (issue 20), Django-free: which unjudged pool item people should judge next.

A pool is seen as a :class:`PoolView`: items (pool entries) and their *hits* (system s retrieved item i for
question q at rank r). Every order maps the current state (which items are judged, which of those are
positive) to an integer *key* per item, higher = sooner; ties are broken by a seeded random permutation of the
items (:func:`order_items`). The same keys drive the simulator (``judging_simulation``) and the live work queue
(``annotation/services/judging_order.py`` turns them into ``Item.queue_key``).

Orders:

- ``random``: no key (today's shuffled queue).
- ``depth``: smallest rank at which any system retrieved the item (TREC's depth-by-depth judging).
- ``move_to_front`` (Cormack, Palmer and Clarke, SIGIR 1998): every system's list is judged from its top; a
  system keeps the lead while its items are relevant and falls back one step per non-relevant judged item it
  retrieved. In key form: priority of system s = -(non-relevant judged items s retrieved); an item takes the
  best of its hits (priority, a fixed random order of the systems, then the better rank).
- ``maxmean`` (Losada, Parapar and Barreiro, SAC 2016 / IP&M 2017): a Beta(1, 1) prior per system (the arm);
  its posterior mean (1 + relevant) / (2 + judged) over the judged items it retrieved; the next item is the
  best-ranked unjudged item of the arm with the highest mean. ``maxmean_question`` runs one bandit per
  question (arm = (system, question)), as in the papers' per-topic allocation.
- ``kg_aware`` (ours): a naive-Bayes estimate of P(relevant) that adds what the KG knows to the systems'
  evidence. log-odds = logit(yield of the item's question, shrunk to its relation's, shrunk to its relation
  category-and-side's, shrunk to the pool's) + the log-odds lifts of (best system x rank band), of how many
  systems retrieved the item, and of how many answers the KG already knows for the question. Every yield is a
  Beta-smoothed rate (prior strength :data:`SHRINK`) of the judged items of that group. Before any judgment
  every lift is 0 and the order is depth order, more systems first.
- ``cal`` and ``cal_top`` (ours): continuous active learning, a logistic regression re-trained on the final
  labels at each decision over system, KG and yield features; ``cal_top`` takes every system's top candidates
  first (see ``annotation/lib/cal_order.py``).

Rewards are final labels: an item counts as judged once its label is final (both judgments agreed, or an
adjudication), never from a single annotator's answer.
"""
from __future__ import annotations

import numpy as np

# The pool's arrays and the judging state are shared with cal_order (which this module dispatches to).
from annotation.lib.cal_order import DEPTH_SHARE, cal_keys
from annotation.lib.judging_pool import JudgingState, OrderError, PoolView, _dense_rank

ORDERS = ("random", "depth", "move_to_front", "maxmean", "maxmean_question", "kg_aware", "cal", "cal_top", "cal_mix")
ADAPTIVE_ORDERS = ("move_to_front", "maxmean", "maxmean_question", "kg_aware", "cal", "cal_top", "cal_mix")
#: Beta-prior strength (pseudo-items) with which each group's yield is shrunk to its parent's (kg_aware).
SHRINK = 8.0
#: Upper bounds of the rank bands of kg_aware's (system x rank) groups.
RANK_BANDS = (1, 2, 3, 5, 10, 20, 50, 100)
#: Upper bounds of the bands of "answers the KG already knows for the question" (kg_aware).
KNOWN_BANDS = (0, 1, 2, 4, 8, 16, 64)


def _best_hit_value(pool: PoolView, hit_value: np.ndarray, empty) -> np.ndarray:
    """Per item, the largest value of its hits (items without hits: ``empty``); hits are sorted by item."""
    best = np.full(pool.num_items, empty, dtype=hit_value.dtype)
    if hit_value.size:
        items, starts = pool.item_blocks
        best[items] = np.maximum.reduceat(hit_value, starts)
    return best


def _best_hit_key(pool: PoolView, hit_key: np.ndarray) -> np.ndarray:
    return _best_hit_value(pool, hit_key, -1)


def _system_tiebreak(num_systems: int, seed: int) -> np.ndarray:
    """A fixed random order of the systems (who leads among equals)."""
    return np.random.default_rng([seed, 7919]).permutation(max(num_systems, 1)).astype(np.int64)


def _arm_keys(pool: PoolView, arm_of_hit: np.ndarray, arm_value: np.ndarray, seed: int) -> np.ndarray:
    """Item key = best hit by (value of its arm, system tie-break, better rank)."""
    if pool.hit_item.size == 0:
        return np.zeros(pool.num_items, dtype=np.int64)
    value_rank = _dense_rank(arm_value)[arm_of_hit]
    tiebreak = _system_tiebreak(pool.num_systems, seed)[pool.hit_system]
    max_rank = int(pool.hit_rank.max())
    key = (value_rank * max(pool.num_systems, 1) + tiebreak) * (max_rank + 1) + (max_rank - pool.hit_rank)
    return _best_hit_key(pool, key)


def _judged_hit_counts(pool: PoolView, state: JudgingState, arm_of_hit: np.ndarray, num_arms: int, kind: str
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(judged, positive) counts of distinct items per arm (an item counts once per arm). The distinct
    (arm, item) pairs depend on the pool only: computed once per ``kind`` of arm and kept on the view."""
    cache = pool.__dict__.setdefault("_arm_pairs", {})
    if kind not in cache:
        pairs = np.unique(arm_of_hit * max(pool.num_items, 1) + pool.hit_item)
        cache[kind] = (pairs // max(pool.num_items, 1), pairs % max(pool.num_items, 1))
    arm, item = cache[kind]
    judged_pair = state.judged[item]
    judged = np.bincount(arm[judged_pair], minlength=num_arms).astype(np.float64)
    positive = np.bincount(arm[judged_pair & state.positive[item]], minlength=num_arms).astype(np.float64)
    return judged, positive


def move_to_front_keys(pool: PoolView, state: JudgingState, seed: int = 0) -> np.ndarray:
    arm = pool.hit_system
    judged, positive = _judged_hit_counts(pool, state, arm, pool.num_systems, "system")
    priority = -(judged - positive)
    return _arm_keys(pool, arm, priority, seed)


def maxmean_keys(pool: PoolView, state: JudgingState, seed: int = 0, *, per_question: bool = False) -> np.ndarray:
    if per_question:
        arm = pool.hit_question * max(pool.num_systems, 1) + pool.hit_system
        num_arms = pool.num_questions * max(pool.num_systems, 1)
    else:
        arm, num_arms = pool.hit_system, pool.num_systems
    judged, positive = _judged_hit_counts(pool, state, arm, num_arms, "question" if per_question else "system")
    mean = (1.0 + positive) / (2.0 + judged)  # posterior mean of Beta(1 + relevant, 1 + non-relevant)
    return _arm_keys(pool, arm, mean, seed)


def _band(values: np.ndarray, bounds: tuple[int, ...]) -> np.ndarray:
    return np.searchsorted(np.asarray(bounds), values, side="left").astype(np.int64)


def _logit(p: np.ndarray | float) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def _shrunk(judged: np.ndarray, positive: np.ndarray, prior: np.ndarray | float) -> np.ndarray:
    return (positive + SHRINK * prior) / (judged + SHRINK)


def _group_rate(group: np.ndarray, num_groups: int, judged_mask: np.ndarray, positive_mask: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    judged = np.bincount(group[judged_mask], minlength=num_groups).astype(np.float64)
    positive = np.bincount(group[judged_mask & positive_mask], minlength=num_groups).astype(np.float64)
    return judged, positive


def kg_aware_scores(pool: PoolView, state: JudgingState) -> np.ndarray:
    """The estimated log-odds of relevance of every item (see the module doc)."""
    n = pool.num_items
    judged, positive = state.judged, state.positive
    base = (positive.sum() + 1.0) / (judged.sum() + 2.0)
    base_logit = float(_logit(base))
    question = pool.item_question
    # hierarchy: pool -> relation category and side -> relation -> question
    groups = pool.question_group[question]
    relations = pool.question_relation[question]
    g_j, g_p = _group_rate(groups, int(pool.question_group.max(initial=0)) + 1, judged, positive)
    g_rate = _shrunk(g_j, g_p, base)
    r_j, r_p = _group_rate(relations, int(pool.question_relation.max(initial=0)) + 1, judged, positive)
    relation_group = np.zeros(r_j.size, dtype=np.int64)
    relation_group[relations] = groups
    r_rate = _shrunk(r_j, r_p, g_rate[relation_group])
    q_j, q_p = _group_rate(question, max(pool.num_questions, 1), judged, positive)
    question_relation = pool.question_relation if pool.num_questions else np.zeros(1, dtype=np.int64)
    q_rate = _shrunk(q_j, q_p, r_rate[question_relation])
    score = _logit(q_rate[question])
    # lift of the best (system x rank band) among the item's hits
    if pool.hit_item.size:
        bands = len(RANK_BANDS) + 1
        cell = pool.hit_system * bands + _band(pool.hit_rank, RANK_BANDS)
        c_j, c_p = _judged_hit_counts(pool, state, cell, max(pool.num_systems, 1) * bands, "cell")
        lift = _logit(_shrunk(c_j, c_p, base)) - base_logit
        best = _best_hit_value(pool, lift[cell], -np.inf)
        score += np.where(np.isfinite(best), best, 0.0)
    # lift of the number of systems that retrieved it (consensus)
    votes = pool.systems_per_item()
    v_j, v_p = _group_rate(votes, int(votes.max(initial=0)) + 1, judged, positive)
    score += _logit(_shrunk(v_j, v_p, base))[votes] - base_logit
    # lift of how many answers the KG already knows for the question
    known = _band(pool.question_known, KNOWN_BANDS)[question] if pool.num_questions else np.zeros(n, np.int64)
    k_j, k_p = _group_rate(known, len(KNOWN_BANDS) + 1, judged, positive)
    score += _logit(_shrunk(k_j, k_p, base))[known] - base_logit
    return score


def kg_aware_keys(pool: PoolView, state: JudgingState) -> np.ndarray:
    score_rank = _dense_rank(np.round(kg_aware_scores(pool, state), 9))
    # cold start and ties: shallower first, then more systems
    max_depth = int(pool.depth.max(initial=0))
    votes = pool.systems_per_item()
    max_votes = int(votes.max(initial=0))
    return (score_rank * (max_depth + 1) + (max_depth - pool.depth)) * (max_votes + 1) + votes


def order_keys(order: str, pool: PoolView, state: JudgingState, seed: int = 0) -> np.ndarray:
    """Key per item (higher = judge sooner) of ``order`` in ``state``; judged items are not excluded here."""
    if order == "random":
        return np.zeros(pool.num_items, dtype=np.int64)
    if order == "depth":
        return int(pool.depth.max(initial=0)) - pool.depth
    if order == "move_to_front":
        return move_to_front_keys(pool, state, seed)
    if order == "maxmean":
        return maxmean_keys(pool, state, seed)
    if order == "maxmean_question":
        return maxmean_keys(pool, state, seed, per_question=True)
    if order == "kg_aware":
        return kg_aware_keys(pool, state)
    if order in ("cal", "cal_top", "cal_mix"):
        return cal_keys(pool, state, top_first=order == "cal_top", depth_share=DEPTH_SHARE if order == "cal_mix" else 0)
    raise OrderError(f"unknown judging order {order!r}; orders: {', '.join(ORDERS)}")


def tiebreak(num_items: int, seed: int) -> np.ndarray:
    """A seeded random permutation rank per item (0..n-1): breaks ties among equal keys."""
    return np.random.default_rng([seed, 104729]).permutation(num_items).astype(np.int64)


def order_items(order: str, pool: PoolView, state: JudgingState, *, seed: int = 0, among: np.ndarray | None = None,
                limit: int | None = None, ties: np.ndarray | None = None) -> np.ndarray:
    """Indices of the items (``among``, default: the unjudged ones) in the order to judge them; the first
    ``limit`` only when given (a partial selection, cheaper than a full sort)."""
    keys = order_keys(order, pool, state, seed)
    ties = tiebreak(pool.num_items, seed) if ties is None else ties
    candidates = np.flatnonzero(~state.judged) if among is None else np.asarray(among, dtype=np.int64)
    if candidates.size == 0:
        return candidates
    keys = _dense_rank(keys[candidates])
    total = keys * pool.num_items + ties[candidates]  # exact in int64: keys are dense ranks < n
    if limit is not None and limit < candidates.size:
        top = np.argpartition(-total, limit - 1)[:limit]
        return candidates[top[np.argsort(-total[top], kind="stable")]]
    return candidates[np.argsort(-total, kind="stable")]
