"""Analyses that compare metrics and label sets (SPEC 5.5). Pure numpy/scipy, no Django.

Shapes used throughout: ``per_query[system, query]`` (one metric) or ``per_query[system, metric, query]``;
system scores ``scores[system, metric]``; all scores "higher is better" (negate MR-like metrics first, or
leave them: tau is unchanged when both rankings compared use the same direction, see ``kendall``).
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluation.core.kendall import kendall_tau_b_batched

__all__ = [
    "DEFAULT_SUBSET_FRACTIONS",
    "pooling_depth_curve",
    "DataSensitivityResult",
    "data_sensitivity",
    "system_pairs",
    "paired_t_test_pvalues",
    "paired_bootstrap_pvalues",
    "DiscriminativePowerResult",
    "discriminative_power",
    "OpenWorldResult",
    "open_world_simulation",
    "AnswerRankShift",
]

# 20 subset sizes from 1% to 95% of the questions (SPEC 5.5).
DEFAULT_SUBSET_FRACTIONS: tuple[float, ...] = tuple(np.round(np.linspace(0.01, 0.95, 20), 4).tolist())

# Ties between system means: sums of the same per-query scores in different orders (matmul vs. sum) may differ
# by a few ulps; a relative difference below this counts as a tie in the vectorised tau-b.
_TIE_RTOL = 1e-10


def _as_system_metric_query(per_query: np.ndarray) -> tuple[np.ndarray, bool]:
    """(S, Q) -> (S, 1, Q) so that every analysis works on (S, M, Q); remembers whether to squeeze."""
    values = np.asarray(per_query, dtype=np.float64)
    if values.ndim == 2:
        return values[:, None, :], True
    if values.ndim == 3:
        return values, False
    raise ValueError(f"per_query must be (systems, queries) or (systems, metrics, queries), got {values.shape}")


# --------------------------------------------------------------------------------------------------------------
# Pooling-depth curve
# --------------------------------------------------------------------------------------------------------------


def pooling_depth_curve(
    sparse_scores: np.ndarray,
    depth_scores: np.ndarray | Callable[[int], np.ndarray],
    depths: Sequence[int] | None = None,
) -> np.ndarray:
    """tau-b(sparse, completed at depth d) per depth and metric.

    ``sparse_scores``: (systems, metrics) on the sparse labels. ``depth_scores``: either an array
    (n_depths, systems, metrics) whose row d holds the scores on the labels completed at depth ``depths[d]``
    (default 0..n_depths-1), or a callable depth -> (systems, metrics) evaluated at each of ``depths``
    (required then, e.g. ``range(0, k + 1)``). Returns (n_depths, metrics); a 1-D ``sparse_scores`` (one
    metric) gives (n_depths,). Depth 0 is the sparse set itself, so its tau is 1 unless a ranking is constant.
    """
    sparse = np.asarray(sparse_scores, dtype=np.float64)
    single_metric = sparse.ndim == 1
    if single_metric:
        sparse = sparse[:, None]
    if callable(depth_scores):
        if depths is None:
            raise ValueError("depths is required when depth_scores is a callable")
        completed = np.stack([np.asarray(depth_scores(d), dtype=np.float64).reshape(sparse.shape) for d in depths])
    else:
        completed = np.asarray(depth_scores, dtype=np.float64).reshape((-1,) + sparse.shape)
        if depths is not None and len(depths) != len(completed):
            raise ValueError("depths and depth_scores disagree on the number of depths")
    # (D, S, M) -> (D, M, S): tau along systems, sparse broadcast against every depth
    taus = kendall_tau_b_batched(sparse.T[None], np.swapaxes(completed, 1, 2))
    return taus[:, 0] if single_metric else taus


# --------------------------------------------------------------------------------------------------------------
# Data sensitivity
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataSensitivityResult:
    """``mean_tau``/``std_tau``: (n_sizes, metrics) over the draws whose tau is defined; ``taus``: all draws
    (n_sizes, n_draws, metrics), NaN where a subset ranking is constant (tau-b undefined)."""

    fractions: np.ndarray
    subset_sizes: np.ndarray
    taus: np.ndarray
    mean_tau: np.ndarray
    std_tau: np.ndarray


def _random_subset_matrix(rng: np.random.Generator, n_draws: int, num_queries: int, size: int) -> np.ndarray:
    """(n_draws, Q) 0/1 matrix, each row selecting ``size`` queries uniformly without replacement."""
    keys = rng.random((n_draws, num_queries))
    chosen = np.argpartition(keys, size - 1, axis=1)[:, :size]  # the `size` smallest keys: a uniform subset
    selection = np.zeros((n_draws, num_queries), dtype=np.float64)
    np.put_along_axis(selection, chosen, 1.0, axis=1)
    return selection


def data_sensitivity(
    per_query: np.ndarray,
    fractions: Sequence[float] = DEFAULT_SUBSET_FRACTIONS,
    n_draws: int = 50,
    seed: int | np.random.Generator = 0,
) -> DataSensitivityResult:
    """Mean tau-b between the system ranking on random query subsets and on all queries.

    For each fraction, ``n_draws`` subsets of round(fraction * Q) queries (at least 1) are drawn without
    replacement with ``np.random.default_rng(seed)``; systems are ranked by their mean score over the subset.
    Subset sums for all draws, systems and metrics come from one matmul of the (draws, Q) 0/1 selection
    matrix with the (Q, systems * metrics) scores.
    Same seed -> same result. ``per_query``: (S, Q) or (S, M, Q); the metric axis is dropped for (S, Q).
    """
    values, squeeze = _as_system_metric_query(per_query)
    if not np.all(np.isfinite(values)):
        raise ValueError("per_query scores must be finite")
    n_systems, n_metrics, n_queries = values.shape
    rng = np.random.default_rng(seed)
    flat = np.ascontiguousarray(values.reshape(n_systems * n_metrics, n_queries))  # rows: (system, metric)
    full_means = (flat.sum(axis=1) / n_queries).reshape(n_systems, n_metrics).T  # (M, S)
    fractions_array = np.asarray(fractions, dtype=np.float64)
    sizes = np.clip(np.rint(fractions_array * n_queries).astype(np.int64), 1, n_queries)
    taus = np.empty((len(sizes), n_draws, n_metrics))
    for index, size in enumerate(sizes):
        selection = _random_subset_matrix(rng, n_draws, n_queries, int(size))
        # (S*M, Q) @ (Q, draws), both operands contiguous along the long inner axis Q: on the shared 2-core
        # machine OpenBLAS ran this layout in ~0.03 s, against 0.6-0.9 s (and erratic) for the same product
        # written (draws, Q) @ (Q, S*M) with 50 draws x 130 columns x 22,850 queries.
        subset_means = (flat @ selection.T).T.reshape(n_draws, n_systems, n_metrics) / size
        taus[index] = kendall_tau_b_batched(
            np.swapaxes(subset_means, 1, 2), full_means[None], rtol=_TIE_RTOL
        )  # (draws, M)
    with _ignore_nan_warnings():
        mean_tau = np.nanmean(taus, axis=1)
        std_tau = np.nanstd(taus, axis=1)
    if squeeze:
        taus, mean_tau, std_tau = taus[..., 0], mean_tau[:, 0], std_tau[:, 0]
    return DataSensitivityResult(fractions_array, sizes, taus, mean_tau, std_tau)


@contextlib.contextmanager
def _ignore_nan_warnings() -> Iterator[None]:
    """nanmean of an all-NaN slice warns; its NaN result is the right answer (tau undefined everywhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# --------------------------------------------------------------------------------------------------------------
# Discriminative power
# --------------------------------------------------------------------------------------------------------------


def system_pairs(n_systems: int) -> np.ndarray:
    """All unordered pairs (i, j), i < j, as an (n (n - 1) / 2, 2) array in row-major order."""
    first, second = np.triu_indices(n_systems, k=1)
    return np.stack([first, second], axis=1)


def _pair_differences(values: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """(S, M, Q) -> (P, M, Q) per-query differences x_i - x_j."""
    return values[pairs[:, 0]] - values[pairs[:, 1]]


def _paired_t_statistic(differences: np.ndarray) -> np.ndarray:
    """t = mean(d) / (sd(d) / sqrt(n)) along the last axis; 0/0 (identical systems) gives NaN."""
    n = differences.shape[-1]
    mean = differences.mean(axis=-1)
    sd = differences.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean / (sd / np.sqrt(n))


def paired_t_test_pvalues(per_query: np.ndarray, pair_chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Two-tailed paired t-test for every system pair, vectorised over pairs (and metrics).

    Returns (pairs (P, 2), p-values (P,) or (P, M)). Same statistic as ``scipy.stats.ttest_rel`` except for
    identical systems (all differences 0), where scipy returns NaN and we return p = 1 (no evidence of a
    difference), so that the sorted p-value curve is always defined. A non-zero mean difference with zero
    variance gives p = 0 like scipy.
    """
    values, squeeze = _as_system_metric_query(per_query)
    n_queries = values.shape[-1]
    if n_queries < 2:
        raise ValueError("the paired t-test needs at least 2 queries")
    pairs = system_pairs(values.shape[0])
    pvalues = np.empty((len(pairs), values.shape[1]))
    for start in range(0, len(pairs), pair_chunk):  # bounds memory at chunk x M x Q differences
        chunk = pairs[start : start + pair_chunk]
        t_statistic = _paired_t_statistic(_pair_differences(values, chunk))
        p = 2.0 * stats.t.sf(np.abs(t_statistic), df=n_queries - 1)
        pvalues[start : start + len(chunk)] = np.where(np.isnan(t_statistic), 1.0, p)
    return pairs, (pvalues[:, 0] if squeeze else pvalues)


def _bootstrap_counts(rng: np.random.Generator, n_bootstrap: int, n_queries: int) -> np.ndarray:
    """(B, Q) multiplicities of each query in B resamples of Q queries with replacement (uint16: compact)."""
    counts = np.empty((n_bootstrap, n_queries), dtype=np.uint16)
    rows_per_chunk = max(1, 2_000_000 // max(n_queries, 1))
    for start in range(0, n_bootstrap, rows_per_chunk):
        n_rows = min(rows_per_chunk, n_bootstrap - start)
        draws = rng.integers(0, n_queries, size=(n_rows, n_queries)) + (np.arange(n_rows) * n_queries)[:, None]
        counts[start : start + n_rows] = np.bincount(draws.ravel(), minlength=n_rows * n_queries).reshape(
            n_rows, n_queries
        )
    return counts


def paired_bootstrap_pvalues(
    per_query: np.ndarray,
    n_bootstrap: int = 1000,
    seed: int | np.random.Generator = 0,
    sample_chunk: int = 100,
    pair_chunk: int = 128,
) -> tuple[np.ndarray, np.ndarray]:
    """Sakai's (2006) paired bootstrap test for every system pair: (pairs, p-values (P,) or (P, M)).

    For the differences z of a pair: t(z) as in the paired t-test; the null sample w = z - mean(z);
    p = #{b : |t(w*b)| >= |t(z)|} / B over B resamples w*b of the queries with replacement. The same B
    resamples (seeded Generator) serve every pair and metric: resample counts C (B, Q) turn the bootstrap
    sums into matmuls C @ w and C @ w^2 over a chunk of (pair, metric) rows at once. Identical systems get
    p = 1. Memory: C as uint16 plus one chunk of differences, not all pairs x metrics x queries.
    """
    values, squeeze = _as_system_metric_query(per_query)
    n_systems, n_metrics, n_queries = values.shape
    if n_queries < 2:
        raise ValueError("the bootstrap test needs at least 2 queries")
    pairs = system_pairs(n_systems)
    counts = _bootstrap_counts(np.random.default_rng(seed), n_bootstrap, n_queries)
    pvalues = np.empty((len(pairs), n_metrics))
    for pair_start in range(0, len(pairs), pair_chunk):
        chunk = pairs[pair_start : pair_start + pair_chunk]
        differences = _pair_differences(values, chunk).reshape(len(chunk) * n_metrics, n_queries)
        observed = np.abs(_paired_t_statistic(differences))  # (rows,)
        shifted = differences - differences.mean(axis=1, keepdims=True)
        shifted_sq = shifted**2
        exceed = np.zeros(len(differences))
        for start in range(0, n_bootstrap, sample_chunk):
            sample_counts = counts[start : start + sample_chunk].astype(np.float64)
            # both operands contiguous along Q: the fast OpenBLAS layout for a long inner dimension (see
            # data_sensitivity)
            sums, sums_sq = sample_counts @ shifted.T, sample_counts @ shifted_sq.T  # (b, rows)
            means = sums / n_queries
            variances = np.maximum(sums_sq - n_queries * means**2, 0.0) / (n_queries - 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                boot_t = np.abs(means / np.sqrt(variances / n_queries))
            boot_t = np.where(np.isnan(boot_t), 0.0, boot_t)  # a constant resample of w: no difference
            exceed += (boot_t >= observed).sum(axis=0)
        chunk_p = np.where(np.isnan(observed), 1.0, exceed / n_bootstrap)
        pvalues[pair_start : pair_start + len(chunk)] = chunk_p.reshape(len(chunk), n_metrics)
    return pairs, (pvalues[:, 0] if squeeze else pvalues)


@dataclass(frozen=True)
class DiscriminativePowerResult:
    """``pairs`` (P, 2); ``pvalues`` per pair (P,) or (P, M); ``sorted_pvalues`` sorted descending along
    the pairs (the plotted curve); ``auc`` = area under the sorted curve with the x axis normalised to [0, 1],
    i.e. the mean p-value (a step function of width 1/P per pair); smaller = more discriminative.
    ``significant_fraction``: share of pairs with p < ``significance_level`` (Sakai's discriminative power)."""

    pairs: np.ndarray
    pvalues: np.ndarray
    sorted_pvalues: np.ndarray
    auc: np.ndarray | float
    significant_fraction: np.ndarray | float
    significance_level: float


def discriminative_power(
    per_query: np.ndarray,
    test: str = "t",
    n_bootstrap: int = 1000,
    seed: int | np.random.Generator = 0,
    significance_level: float = 0.05,
) -> DiscriminativePowerResult:
    """p-value curve of all system pairs: ``test`` = "t" (paired t-test) or "bootstrap" (Sakai)."""
    if test == "t":
        pairs, pvalues = paired_t_test_pvalues(per_query)
    elif test == "bootstrap":
        pairs, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=n_bootstrap, seed=seed)
    else:
        raise ValueError(f"unknown test {test!r}: use 't' or 'bootstrap'")
    sorted_pvalues = -np.sort(-pvalues, axis=0)
    auc = sorted_pvalues.mean(axis=0)
    significant = (pvalues < significance_level).mean(axis=0)
    if np.ndim(auc) == 0:
        auc, significant = float(auc), float(significant)
    return DiscriminativePowerResult(pairs, pvalues, sorted_pvalues, auc, significant, significance_level)


# --------------------------------------------------------------------------------------------------------------
# Open-world simulation
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenWorldResult:
    """``closed_world_scores``: (S,) or (S, M) with every answer kept; ``taus`` (n_fractions, n_repeats[, M])
    between the closed-world ordering and the ordering after dropping; ``mean_tau`` averages the repeats
    (ignoring undefined taus)."""

    drop_fractions: np.ndarray
    closed_world_scores: np.ndarray
    taus: np.ndarray
    mean_tau: np.ndarray


def open_world_simulation(
    metric_fn: Callable[[np.ndarray], np.ndarray],
    num_answers: int,
    drop_fractions: Sequence[float] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
    n_repeats: int = 10,
    seed: int | np.random.Generator = 0,
) -> OpenWorldResult:
    """Closed-world vs open-world consistency of a metric.

    The closed-world test labels have ``num_answers`` true answers (e.g. every (question, answer) pair of a
    near-complete KG). For each fraction, ``n_repeats`` times, exactly round(fraction * num_answers) answers
    chosen uniformly (seeded) are dropped from the labels, and ``metric_fn(kept_mask)`` -> scores (S,) or
    (S, M) is recomputed; tau-b against ``metric_fn(all True)`` measures how well the metric keeps the
    closed-world ordering.

    ``metric_fn`` owns what "dropping" means for its metric: a dropped answer is no longer a label, so it is
    neither evaluated nor filtered; it becomes an ordinary (false-looking) candidate that pushes down the
    answers it outscores, and a question left without answers drops out. ``AnswerRankShift`` implements this
    for filtered ranks of micro metrics; macro metrics can be built the same way from its shifted ranks.
    """
    rng = np.random.default_rng(seed)
    closed = np.asarray(metric_fn(np.ones(num_answers, dtype=bool)), dtype=np.float64)
    fractions = np.asarray(drop_fractions, dtype=np.float64)
    taus = np.empty((len(fractions), n_repeats) + closed.shape[1:])
    for index, fraction in enumerate(fractions):
        n_dropped = int(np.rint(fraction * num_answers))
        for repeat in range(n_repeats):
            kept = np.ones(num_answers, dtype=bool)
            kept[rng.choice(num_answers, size=n_dropped, replace=False)] = False
            scores = np.asarray(metric_fn(kept), dtype=np.float64)
            taus[index, repeat] = kendall_tau_b_batched(closed.T, scores.T)  # systems on the last axis
    with _ignore_nan_warnings():
        mean_tau = np.nanmean(taus, axis=1)
    return OpenWorldResult(fractions, closed, taus, mean_tau)


class AnswerRankShift:
    """Filtered ranks of the closed-world answers after some answers are dropped from the labels.

    Closed world: answer a of question q has filtered rank ``ranks[s, a]`` for system s (all other answers
    of q filtered). Once answer b is dropped, it is no longer filtered for q, so every kept answer of q that
    system s scores below b moves down by 1 (by 1/2 on a score tie, the realistic tie policy of SPEC 5.1):

        rank'(s, a) = rank(s, a) + sum_{b in q, b dropped} [score(s, b) > score(s, a)] + 1/2 [equal]

    ``question_of_answer`` (n_answers,) groups answers by question; ``answer_scores`` (S, n_answers) are
    the systems' scores of each answer (only their order within a question matters). The within-question
    answer pairs are enumerated once (sum over questions of |A_q| (|A_q| - 1)).
    """

    def __init__(self, ranks: np.ndarray, answer_scores: np.ndarray, question_of_answer: np.ndarray) -> None:
        self.ranks = np.asarray(ranks, dtype=np.float64)
        scores = np.asarray(answer_scores, dtype=np.float64)
        questions = np.asarray(question_of_answer)
        if self.ranks.shape != scores.shape or scores.shape[-1] != len(questions):
            raise ValueError("ranks, answer_scores and question_of_answer disagree on the number of answers")
        order = np.argsort(questions, kind="stable")
        _, starts, group_sizes = np.unique(questions[order], return_index=True, return_counts=True)
        # Every ordered pair (a, b), a != b, of one group, in positions of the question-sorted order: each
        # member a is repeated once per member of its group, and b runs over the group's positions.
        member_group_size = np.repeat(group_sizes, group_sizes)
        member_group_start = np.repeat(starts, group_sizes)
        a_sorted = np.repeat(np.arange(len(order)), member_group_size)
        first_slot_of_member = np.cumsum(member_group_size) - member_group_size
        offset_in_group = np.arange(len(a_sorted)) - np.repeat(first_slot_of_member, member_group_size)
        b_sorted = np.repeat(member_group_start, member_group_size) + offset_in_group
        distinct = a_sorted != b_sorted
        self.pair_answer = order[a_sorted[distinct]]
        self.pair_other = order[b_sorted[distinct]]
        # Shift contributed by `other` to `answer` when `other` is dropped, per system, in half ranks (0, 1, 2)
        # as int8: FB15k-237's test questions have ~0.9 M within-question answer pairs, x 13 systems.
        other_scores, answer_scores_ = scores[:, self.pair_other], scores[:, self.pair_answer]
        self.pair_half_shift = (2 * (other_scores > answer_scores_) + (other_scores == answer_scores_)).astype(
            np.int8
        )

    def shifted_ranks(self, kept_mask: np.ndarray) -> np.ndarray:
        """(S, n_answers) open-world ranks; entries of dropped answers are meaningless (mask them out)."""
        dropped = ~np.asarray(kept_mask, dtype=bool)
        n_systems, n_answers = self.ranks.shape
        active = dropped[self.pair_other]
        half_steps = self.pair_half_shift[:, active]  # (S, active pairs)
        target = self.pair_answer[active][None, :] + (np.arange(n_systems) * n_answers)[:, None]
        half_shift = np.bincount(target.ravel(), weights=half_steps.ravel(), minlength=n_systems * n_answers)
        return self.ranks + 0.5 * half_shift.reshape(n_systems, n_answers)

    def micro_metric_fn(self, transform: Callable[[np.ndarray], np.ndarray] = np.reciprocal) -> Callable:
        """metric_fn for ``open_world_simulation``: mean of ``transform(rank')`` over the kept answers
        (default 1/rank: micro MRR)."""

        def metric_fn(kept_mask: np.ndarray) -> np.ndarray:
            kept = np.asarray(kept_mask, dtype=bool)
            return transform(self.shifted_ranks(kept)[:, kept]).mean(axis=1)

        return metric_fn
