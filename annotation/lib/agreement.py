"""Inter-annotator agreement statistics (Django-free): percent agreement, Cohen's kappa, Gwet's AC1,
Krippendorff's alpha (nominal) and a percentile bootstrap over units.

Pairs are (label of rater 1, label of rater 2); units are lists of the labels one item received, any number
of raters, ``None`` for a missing value. Undefined values (no data, or chance agreement of 1) are ``nan``.

"Can't tell" answers (``CANT_TELL``, issue 15) are not a third category of the question: the annotator gave no
label. The campaign's statistics (:func:`yes_no_statistics`) therefore read them so:

- percent agreement over every doubly judged item, a pair with a can't tell (C/Y, C/N and C/C alike) counting
  as a disagreement: the two answers did not decide the item, it went to adjudication;
- Cohen's kappa and Gwet's AC1 over the Y/N pairs only (a can't tell is no rating to correct for chance);
- Krippendorff's alpha with can't-tell answers as missing values (its way of leaving a rating out);
- the number of pairs with a can't tell reported beside them.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

Pair = tuple[Hashable, Hashable]

NAN = float("nan")


def percent_agreement(pairs: Sequence[Pair]) -> float:
    if not pairs:
        return NAN
    return sum(1 for a, b in pairs if a == b) / len(pairs)


def cohen_kappa(pairs: Sequence[Pair]) -> float:
    """(p_o - p_e) / (1 - p_e) with p_e from each rater's own marginals."""
    n = len(pairs)
    if not n:
        return NAN
    po = percent_agreement(pairs)
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    pe = sum(first[c] * second[c] for c in first) / (n * n)
    return NAN if math.isclose(pe, 1.0) else (po - pe) / (1 - pe)


def gwet_ac1(pairs: Sequence[Pair], categories: Sequence[Hashable] | None = None) -> float:
    """Gwet's AC1 for two raters: p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k = mean of both raters' shares.

    ``categories`` fixes q (for yes/no judging pass ("Y", "N")); by default the categories observed.
    """
    n = len(pairs)
    if not n:
        return NAN
    counts = Counter(a for a, _ in pairs) + Counter(b for _, b in pairs)
    cats = list(categories) if categories is not None else sorted(counts, key=str)
    q = len(cats)
    if q < 2:
        return NAN
    po = percent_agreement(pairs)
    pe = sum((counts[c] / (2 * n)) * (1 - counts[c] / (2 * n)) for c in cats) / (q - 1)
    return NAN if math.isclose(pe, 1.0) else (po - pe) / (1 - pe)


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable | None]]) -> float:
    """Krippendorff's alpha for nominal data, any number of raters, missing values allowed.

    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k, from the coincidence matrix o over the
    pairable units (>= 2 values); nan when fewer than 2 pairable values or one category only.
    """
    coincidence: Counter = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, nc in counts.items():
            for k, nk in counts.items():
                pairs = nc * (nc - 1) if c == k else nc * nk
                if pairs:
                    coincidence[(c, k)] += pairs / (m - 1)
    totals: Counter = Counter()
    for (c, _k), value in coincidence.items():
        totals[c] += value
    n = sum(totals.values())
    if n < 2:
        return NAN
    disagree_observed = sum(v for (c, k), v in coincidence.items() if c != k)
    disagree_expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if disagree_expected == 0:
        return NAN
    return 1 - (n - 1) * disagree_observed / disagree_expected


CANT_TELL = "C"  # annotation.models.Answer.CANT_TELL


@dataclass(frozen=True)
class YesNoStatistics:
    items: int  # doubly judged items (pairs), can't tell included
    cant_tell: int  # pairs with at least one can't-tell answer
    percent: float  # over all pairs, a can't tell counting as a disagreement
    kappa: float  # Y/N pairs only
    ac1: float  # Y/N pairs only
    alpha: float  # every answer of the units, can't tell as missing


def yes_no_statistics(pairs: Sequence[Pair], units: Sequence[Sequence[Hashable | None]] | None = None,
                      cant_tell: Hashable = CANT_TELL) -> YesNoStatistics:
    """The agreement statistics of yes/no judging with can't-tell answers, as the module's docstring says.
    ``units``: every answer of each item for alpha (default: the pairs)."""
    yes_no = [(a, b) for a, b in pairs if a != cant_tell and b != cant_tell]
    percent = NAN if not pairs else sum(1 for a, b in pairs if a == b and a != cant_tell) / len(pairs)
    units = pairs_to_units(pairs) if units is None else units
    alpha = krippendorff_alpha_nominal([[None if v == cant_tell else v for v in unit] for unit in units])
    return YesNoStatistics(len(pairs), len(pairs) - len(yes_no), percent, cohen_kappa(yes_no),
                           gwet_ac1(yes_no, ("Y", "N")), alpha)


def pairs_to_units(pairs: Sequence[Pair]) -> list[list[Hashable]]:
    return [[a, b] for a, b in pairs]


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


def bootstrap(
    statistic: Callable[[list], float], units: Sequence, *, samples: int = 1000, level: float = 0.95, seed: int = 0
) -> Interval:
    """Percentile bootstrap CI of ``statistic`` over resampled units (items); nan resamples are dropped."""
    units = list(units)
    estimate = statistic(units)
    if not units:
        return Interval(NAN, NAN, NAN)
    rng = random.Random(seed)
    values = sorted(
        v for v in (statistic([units[rng.randrange(len(units))] for _ in units]) for _ in range(samples))
        if not math.isnan(v)
    )
    if not values:
        return Interval(estimate, NAN, NAN)
    tail = (1 - level) / 2
    low = values[min(len(values) - 1, max(0, int(math.floor(tail * len(values)))))]
    high = values[min(len(values) - 1, max(0, int(math.ceil((1 - tail) * len(values))) - 1))]
    return Interval(estimate, low, high)


def wilson_interval(successes: int, total: int, z: float = 1.959964) -> Interval:
    """Accuracy with a Wilson score interval (gold-check accuracy per annotator)."""
    if total == 0:
        return Interval(NAN, NAN, NAN)
    p = successes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


# ---------------------------------------------------------------------------------------------------------
# Two raters, yes/no: every statistic from the 2x2 table, vectorised so that a bootstrap over items is a
# multinomial resample of the table (issue 8: agreement that suits lopsided yes/no data).

TABLE_STATISTICS = ("percent", "kappa", "ac1", "alpha")


@dataclass(frozen=True)
class Table:
    """Counts of items by (rater 1, rater 2) answer: yy, yn (rater 1 Y, rater 2 N), ny, nn; ``cant_tell``: the
    pairs with a can't-tell answer (in no cell: a disagreement in the percent only, see :func:`yes_no_statistics`)."""

    yy: int
    yn: int
    ny: int
    nn: int
    cant_tell: int = 0

    @property
    def n(self) -> int:
        """The Y/N pairs."""
        return self.yy + self.yn + self.ny + self.nn

    @property
    def pairs(self) -> int:
        """Every pair, can't tell included."""
        return self.n + self.cant_tell


def table_from_pairs(pairs: Sequence[Pair], yes: Hashable = "Y", cant_tell: Hashable | None = None) -> Table:
    """The table of ``pairs``; with ``cant_tell`` given, the pairs with that answer go to ``Table.cant_tell``."""
    rated = [(a, b) for a, b in pairs if cant_tell is None or cant_tell not in (a, b)]
    counts = Counter((a == yes, b == yes) for a, b in rated)
    return Table(counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)],
                 len(pairs) - len(rated))


def table_statistics(yy, yn, ny, nn, cant_tell=0) -> dict[str, object]:
    """Percent agreement, Cohen's kappa, Gwet's AC1 (q = 2) and Krippendorff's alpha (nominal, two values per
    item) of 2x2 tables; scalars or numpy arrays of counts (one table per position). nan where undefined.

    With n Y/N items, a = yy, d = nn: kappa: p_e = p1 p2 + (1 - p1)(1 - p2) with each rater's Y share and
    p_o = (a + d) / n; AC1: p_e = 2 pi (1 - pi) with pi the mean Y share; alpha = 1 - (2n - 1)(yn + ny) /
    (n_Y n_N) with n_Y = 2 yy + yn + ny and n_N = 2 nn + yn + ny the values of each category. The percent
    agreement is (a + d) / (n + cant_tell): a pair with a can't tell is a disagreement (:func:`yes_no_statistics`).
    """
    import numpy as np

    yy, yn, ny, nn, unsure = (np.asarray(x, dtype=float) for x in (yy, yn, ny, nn, cant_tell))
    n = yy + yn + ny + nn
    with np.errstate(divide="ignore", invalid="ignore"):
        percent = np.where(n + unsure == 0, np.nan, (yy + nn) / (n + unsure))
        po = (yy + nn) / n
        p1, p2 = (yy + yn) / n, (yy + ny) / n
        pe_kappa = p1 * p2 + (1 - p1) * (1 - p2)
        kappa = np.where(np.isclose(pe_kappa, 1.0), np.nan, (po - pe_kappa) / (1 - pe_kappa))
        pi = (p1 + p2) / 2
        pe_ac1 = 2 * pi * (1 - pi)
        ac1 = np.where(np.isclose(pe_ac1, 1.0), np.nan, (po - pe_ac1) / (1 - pe_ac1))
        n_yes, n_no = 2 * yy + yn + ny, 2 * nn + yn + ny
        expected = n_yes * n_no
        alpha = np.where(expected == 0, np.nan, 1 - (2 * n - 1) * (yn + ny) / expected)
    kappa, ac1, alpha = (np.where(n == 0, np.nan, x) for x in (kappa, ac1, alpha))
    result = {"percent": percent, "kappa": kappa, "ac1": ac1, "alpha": alpha}
    if po.ndim == 0:
        return {k: float(v) for k, v in result.items()}
    return result


def table_intervals(
    table: Table, *, samples: int = 1000, level: float = 0.95, seed: int = 0
) -> dict[str, Interval]:
    """Each of :data:`TABLE_STATISTICS` with a percentile bootstrap interval: items resampled with replacement
    (a multinomial draw of the table's cells and its can't-tell pairs, ``seed``ed); resamples where a statistic
    is undefined are dropped."""
    import numpy as np

    cells = [table.yy, table.yn, table.ny, table.nn] + ([table.cant_tell] if table.cant_tell else [])
    estimates = table_statistics(*cells)
    total = table.pairs
    if total == 0:
        return {name: Interval(NAN, NAN, NAN) for name in TABLE_STATISTICS}
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(total, np.array(cells, dtype=float) / total, size=samples)
    drawn = table_statistics(*counts.T)
    tail = (1 - level) / 2
    result = {}
    for name in TABLE_STATISTICS:
        values = np.sort(drawn[name][~np.isnan(drawn[name])])
        if not len(values):
            result[name] = Interval(estimates[name], NAN, NAN)
            continue
        low = values[min(len(values) - 1, max(0, int(math.floor(tail * len(values)))))]
        high = values[min(len(values) - 1, max(0, int(math.ceil((1 - tail) * len(values))) - 1))]
        result[name] = Interval(estimates[name], float(low), float(high))
    return result
