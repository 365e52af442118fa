"""Continuous active learning (CAL) judging orders (issue 20), Django-free.

CAL (Cormack and Grossman, SIGIR 2014; the baseline of the TREC Total Recall tracks) re-trains a classifier on
the items judged so far at every decision and hands out the unjudged items by predicted probability of
relevance. Here the classifier is an L2-regularised logistic regression (Newton steps, numpy only) on features
per pool item:

- from the systems: the reciprocal rank at which each system retrieved the item (0: not retrieved), the log of
  its best rank, how many systems retrieved it (consensus);
- from the KG (static, given by the caller as ``PoolView.item_features``, see :func:`candidate_features`): the
  candidate entity's train degree, how often it answers the question's relation on that side in train (the
  soft form of "its type fits the relation"), and the number of answers the KG already knows for the question;
  the relation category-and-side as one-hot;
- from the judgments so far (re-computed at each decision, leave-one-out on the judged items so that an item's
  own label never explains itself): the Beta-smoothed yield of the item's question (shrunk to its relation's),
  of its relation (shrunk to its category-and-side), and of its candidate entity on that relation side.

Before both classes have :data:`MIN_CLASS` labels the model is not fitted and the order is kg_aware's cold start
(depth order, more systems first). Orders:

- ``cal``: CAL on its own (best for finding positives).
- ``cal_top``: the items some system ranks at the top (rank <= :data:`TOP_RANK`) first, in CAL order, then the
  rest in CAL order. An MRR depends on the first relevant rank of each (system, question), so judging every
  system's top candidates early fixes most of the system ranking, as depth order does, while CAL still picks
  which top candidates come first.
- ``cal_mix``: of every batch, :data:`DEPTH_SHARE` in depth order and the rest in CAL's order (interleaved), so
  every system's list keeps being read from its top while CAL hunts positives.
"""
from __future__ import annotations

import numpy as np

from annotation.lib.judging_pool import JudgingState, PoolView, _dense_rank

#: Labels of each class needed before the classifier is fitted (before: cold-start order).
MIN_CLASS = 3
#: L2 penalty of the logistic regression on standardised features (the intercept is not penalised).
L2 = 1.0
#: Beta-prior strength (pseudo-items) of the yields that are features.
SHRINK = 8.0
#: ``cal_top``: items some system ranks at this rank or better come first.
TOP_RANK = 1
#: ``cal_mix``: share of every batch taken in depth order (the rest in CAL's order).
DEPTH_SHARE = 0.3
NEWTON_STEPS = 25
CANDIDATE_FEATURES = ("log_degree", "log_role_count", "role_fit", "log_role_share")


def candidate_features(candidates: np.ndarray, relations: np.ndarray, sides: np.ndarray, train: np.ndarray,
                       num_entities: int) -> np.ndarray:
    """(n, 4) static KG features of candidate entities answering (relation, side): log1p of the candidate's
    degree in ``train`` (m, 3 head/relation/tail), log1p of how often it fills that side of that relation in
    train, whether it ever does (0/1), and log((that count + 1) / (the relation's train triples + 1)), the
    share of the relation's triples it fills (a popular answer of this relation). ``sides``: 1 when the
    candidate is a tail, 0 a head."""
    candidates = np.asarray(candidates, dtype=np.int64)
    relations = np.asarray(relations, dtype=np.int64)
    sides = np.asarray(sides, dtype=np.int64)
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    size = max(num_entities, int(candidates.max(initial=-1)) + 1, int(train[:, [0, 2]].max(initial=-1)) + 1, 1)
    degree = np.bincount(train[:, 0], minlength=size) + np.bincount(train[:, 2], minlength=size)
    # role key: (relation, side, entity) -> count
    role_keys = np.concatenate([(train[:, 1] * 2 + 0) * size + train[:, 0], (train[:, 1] * 2 + 1) * size + train[:, 2]])
    keys, counts = np.unique(role_keys, return_counts=True)
    wanted = (relations * 2 + sides) * size + candidates
    role = np.zeros(wanted.size, dtype=np.int64)
    if keys.size:  # (an empty train has no role: indexing the empty keys failed)
        position = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        role = np.where(keys[position] == wanted, counts[position], 0)
    relation_size = np.bincount(train[:, 1], minlength=int(relations.max(initial=-1)) + 1)[relations]
    return features_from_counts(degree[candidates], role, relation_size)


def features_from_counts(degree: np.ndarray, role: np.ndarray, relation_size: np.ndarray) -> np.ndarray:
    """:func:`candidate_features` from the counts (each candidate's train degree, role count, and its relation's
    train triples), for callers that keep the KG's counts (``pooling.selectors.kg_stats``)."""
    share = np.log((role + 1.0) / (relation_size + 1.0))
    return np.column_stack([np.log1p(degree), np.log1p(role), (role > 0).astype(np.float64), share])


def _static(pool: PoolView) -> np.ndarray:
    """Features that depend on the pool only (kept on the view)."""
    if "_cal_static" in pool.__dict__:
        return pool.__dict__["_cal_static"]
    n, systems = pool.num_items, max(pool.num_systems, 1)
    reciprocal = np.zeros((n, systems))
    if pool.hit_item.size:
        np.maximum.at(reciprocal, (pool.hit_item, pool.hit_system), 1.0 / pool.hit_rank)
    question = pool.item_question
    columns = [reciprocal, np.log(pool.depth.astype(np.float64))[:, None],
               pool.systems_per_item().astype(np.float64)[:, None]]
    if pool.num_questions:
        known = np.log1p(pool.question_known[question]).astype(np.float64)[:, None]
        columns.append(known)
        groups = pool.question_group[question]
        used = np.unique(groups)
        if used.size > 1:
            one_hot = (groups[:, None] == used[None, :]).astype(np.float64)
            # a functional relation side (1-1, N-1) with a known answer rarely has another one: per-group slope
            columns += [one_hot, one_hot * known]
    if pool.item_candidate is not None:  # how many of the pool's items propose this candidate
        candidate = np.asarray(pool.item_candidate, dtype=np.int64)
        _, inverse, counts = np.unique(candidate, return_inverse=True, return_counts=True)
        columns.append(np.log(counts[inverse.reshape(-1)]).astype(np.float64)[:, None])
    if pool.item_features is not None:
        columns.append(np.asarray(pool.item_features, dtype=np.float64).reshape(n, -1))
    matrix = np.hstack(columns)
    pool.__dict__["_cal_static"] = matrix
    return matrix


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def _loo_yield(group: np.ndarray, num_groups: int, state: JudgingState, prior: np.ndarray | float) -> np.ndarray:
    """Per item, the shrunk yield of its group over the judged items other than itself."""
    judged, positive = state.judged, state.positive
    j = np.bincount(group[judged], minlength=num_groups).astype(np.float64)
    p = np.bincount(group[judged & positive], minlength=num_groups).astype(np.float64)
    own_j = judged.astype(np.float64)
    own_p = (judged & positive).astype(np.float64)
    prior_item = prior if np.isscalar(prior) else np.asarray(prior)
    return (p[group] - own_p + SHRINK * prior_item) / (j[group] - own_j + SHRINK)


def _dynamic(pool: PoolView, state: JudgingState) -> np.ndarray:
    """Yields of the item's question, relation and candidate so far (log-odds, leave-one-out)."""
    base = (state.positive.sum() + 1.0) / (state.judged.sum() + 2.0)
    question = pool.item_question
    relation = pool.question_relation[question] if pool.num_questions else np.zeros(pool.num_items, np.int64)
    group = pool.question_group[question] if pool.num_questions else np.zeros(pool.num_items, np.int64)
    group_yield = _loo_yield(group, int(group.max(initial=0)) + 1, state, base)
    relation_yield = _loo_yield(relation, int(relation.max(initial=0)) + 1, state, group_yield)
    question_yield = _loo_yield(question, max(pool.num_questions, 1), state, relation_yield)
    columns = [_logit(question_yield), _logit(relation_yield)]
    if pool.item_candidate is not None:
        # the candidate entity's yield when it answers this relation on this side (the group holds the side)
        candidate = np.asarray(pool.item_candidate, dtype=np.int64)
        groups = int(group.max(initial=0)) + 1
        role_key = (candidate * (int(relation.max(initial=0)) + 1) + relation) * groups + group
        cache = pool.__dict__.setdefault("_cal_roles", {})
        if "role" not in cache:
            cache["role"] = np.unique(role_key, return_inverse=True)[1].reshape(-1)
        role = cache["role"]
        columns.append(_logit(_loo_yield(role, int(role.max(initial=0)) + 1, state, relation_yield)))
    return np.column_stack(columns)


def _weighted_gram(x: np.ndarray, weight: np.ndarray, chunk: int = 256) -> np.ndarray:
    """x' diag(weight) x in row blocks: small products stay single-threaded in BLAS, and a threaded product of
    this shape was 100x slower on a busy shared CPU (0.3 s against 3 ms for 9,000 x 35)."""
    gram = np.zeros((x.shape[1], x.shape[1]))
    for start in range(0, x.shape[0], chunk):
        block = x[start:start + chunk]
        gram += (block * weight[start:start + chunk, None]).T @ block
    return gram


def fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float | None = None, steps: int = NEWTON_STEPS
                 ) -> np.ndarray:
    """Weights (intercept first) of an L2-regularised logistic regression by Newton's method."""
    x = np.hstack([np.ones((features.shape[0], 1)), features])
    y = labels.astype(np.float64)
    penalty = np.full(x.shape[1], L2 if l2 is None else l2)
    penalty[0] = 1e-6
    w = np.zeros(x.shape[1])
    w[0] = float(_logit(np.array([(y.sum() + 0.5) / (y.size + 1.0)]))[0])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30.0, 30.0)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = _weighted_gram(x, p * (1 - p)) + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-5:
            break
    return w


def cal_scores(pool: PoolView, state: JudgingState) -> np.ndarray | None:
    """Predicted log-odds of relevance per item, or None while too few labels of either class exist."""
    positives = int((state.judged & state.positive).sum())
    negatives = int((state.judged & ~state.positive).sum())
    if min(positives, negatives) < MIN_CLASS:
        return None
    features = np.hstack([_static(pool), _dynamic(pool, state)])
    train = state.judged
    mean = features[train].mean(axis=0)
    scale = features[train].std(axis=0)
    scale[scale < 1e-9] = 1.0
    standard = (features - mean) / scale
    w = fit_logistic(standard[train], state.positive[train])
    return w[0] + standard @ w[1:]


def _cold_start(pool: PoolView) -> np.ndarray:
    max_depth = int(pool.depth.max(initial=0))
    votes = pool.systems_per_item()
    return (max_depth - pool.depth) * (int(votes.max(initial=0)) + 1) + votes


def _position(keys: np.ndarray, unjudged: np.ndarray) -> np.ndarray:
    """0 for the unjudged item with the highest key, 1 for the next, ... (judged items after them)."""
    order = np.lexsort((np.arange(keys.size), -keys, ~unjudged))
    position = np.empty(keys.size, dtype=np.int64)
    position[order] = np.arange(keys.size)
    return position


def cal_keys(pool: PoolView, state: JudgingState, *, top_first: bool = False, depth_share: float = 0.0
             ) -> np.ndarray:
    scores = cal_scores(pool, state)
    cold = _cold_start(pool)
    if scores is None:
        keys = cold
    else:
        keys = _dense_rank(np.round(scores, 9)) * (int(cold.max(initial=0)) + 1) + cold
    if top_first:
        keys = keys + (pool.depth <= TOP_RANK) * (int(keys.max(initial=0)) + 1)
    if depth_share > 0 and scores is not None:
        # interleave: of every batch, ``depth_share`` from depth order, the rest from CAL's order
        unjudged = ~state.judged
        by_cal = _position(keys, unjudged) / (1.0 - depth_share)
        by_depth = _position(cold, unjudged) / depth_share
        keys = _dense_rank(-np.minimum(by_cal, by_depth))
    return keys


def hindsight_scores(pool: PoolView, truth: np.ndarray) -> np.ndarray:
    """An optimistic ceiling of what CAL's features can do: the log-odds of a model fitted on *every* label
    (the yields leave-one-out over all the others). Judging in this order is what a learnt linear order could
    do at best with these features; the bench reports the judgments it needs."""
    truth = np.asarray(truth, dtype=bool)
    full = JudgingState(np.ones(pool.num_items, dtype=bool), truth)
    features = np.hstack([_static(pool), _dynamic(pool, full)])
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    standard = (features - features.mean(axis=0)) / scale
    w = fit_logistic(standard, truth)
    return w[0] + standard @ w[1:]
