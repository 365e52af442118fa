"""Answer-wise MR / MRR / Hits@K and their breakdowns on a hand-computed example."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from evaluation.core import micro
from tests._raises_support import whole

# Three relations, each with one head and one tail ranking; one fractional (realistic-tie) rank.
RANKS = np.array([1.0, 2.0, 4.0, 10.0, 1.5, 3.0])
RELATION = np.array([0, 0, 1, 1, 2, 2])
SIDE = np.array([micro.HEAD, micro.TAIL] * 3)
NAMES = ["/people/person/a", "/people/person/b", "/film/film/c"]


def test_overall_metrics() -> None:
    metrics = micro.micro_metrics(RANKS, hits=(1, 3, 10))
    assert metrics["MR"] == pytest.approx(21.5 / 6)
    assert metrics["MRR"] == pytest.approx((1 + 0.5 + 0.25 + 0.1 + 1 / 1.5 + 1 / 3) / 6)
    assert metrics["Hits@1"] == pytest.approx(1 / 6)  # 1.5 is not within 1
    assert metrics["Hits@3"] == pytest.approx(4 / 6)
    assert metrics["Hits@10"] == pytest.approx(1.0)


def test_by_side() -> None:
    table = micro.by_side(RANKS, SIDE, hits=(3,))
    assert table["head"]["MR"] == pytest.approx((1 + 4 + 1.5) / 3)
    assert table["tail"]["MRR"] == pytest.approx((0.5 + 0.1 + 1 / 3) / 3)
    assert table["tail"]["Hits@3"] == pytest.approx(2 / 3)


def test_by_relation_and_macro_over_relations() -> None:
    table = micro.by_relation(RANKS, RELATION, NAMES, hits=(1,))
    assert table["/people/person/a"]["MRR"] == pytest.approx(0.75)
    assert table["/film/film/c"]["MR"] == pytest.approx(2.25)
    macro = micro.macro_over_relations(RANKS, RELATION, hits=(1,))
    assert macro["MRR"] == pytest.approx((0.75 + 0.175 + 0.5) / 3)
    assert macro["Hits@1"] == pytest.approx((0.5 + 0 + 0) / 3)


def test_macro_over_domains_pools_rankings_within_a_domain() -> None:
    codes, labels = micro.group_codes(NAMES)
    assert labels == ["film", "people"]
    macro = micro.macro_over_groups(RANKS, RELATION, codes, hits=(1,))
    people = (1 + 0.5 + 0.25 + 0.1) / 4
    film = (1 / 1.5 + 1 / 3) / 2
    assert macro["MRR"] == pytest.approx((people + film) / 2)
    assert micro.freebase_domain("/people/person/nationality") == "people"


def test_by_category_and_side() -> None:
    table = micro.by_category_side(RANKS, RELATION, SIDE, ["1-1", "N-N", "1-1"], hits=(1,))
    assert set(table) == {"1-1/head", "1-1/tail", "N-N/head", "N-N/tail"}
    assert table["1-1/head"]["MR"] == pytest.approx((1 + 1.5) / 2)
    assert table["1-1/tail"]["MR"] == pytest.approx((2 + 3) / 2)
    assert table["N-N/tail"]["MRR"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="unknown relation category"):
        micro.by_category_side(RANKS, RELATION, SIDE, ["1-1", "M-N", "1-1"])


def test_ranks_below_one_are_rejected() -> None:
    with pytest.raises(ValueError, match=whole("ranks must be >= 1 (1-based filtered ranks)")):
        micro.micro_metrics(np.array([0.0, 2.0]))


def test_side_codes_and_default_metric_names() -> None:
    # SPEC 5.2: side 0 is the head question, 1 the tail question; MR, MRR, Hits@1/3/10 by default
    assert (micro.HEAD, micro.TAIL) == (0, 1)
    assert micro.metric_names() == ["MR", "MRR", "Hits@1", "Hits@3", "Hits@10"]
    assert micro.metric_names((5,)) == ["MR", "MRR", "Hits@5"]
    # ranks 1, 3, 10, 11: Hits@1 = 1/4, Hits@3 = 2/4, Hits@10 = 3/4 (a cut-off includes its own rank)
    metrics = micro.micro_metrics(np.array([1.0, 3.0, 10.0, 11.0]))
    assert list(metrics) == micro.metric_names()
    assert [metrics[f"Hits@{k}"] for k in (1, 3, 10)] == [0.25, 0.5, 0.75]
    table = micro.by_side(np.array([2.0, 5.0]), np.array([0, 1]), hits=(1,))
    assert table == {"head": {"MR": 2.0, "MRR": 0.5, "Hits@1": 0.0}, "tail": {"MR": 5.0, "MRR": 0.2, "Hits@1": 0.0}}


def test_no_rankings_give_nan_and_empty_tables() -> None:
    empty = np.array([], dtype=np.float64)
    assert all(np.isnan(v) for v in micro.micro_metrics(empty).values())
    means, counts = micro.grouped_metrics(empty, np.array([], dtype=np.int64))
    assert counts.shape == (0,) and all(v.shape == (0,) for v in means.values())
    assert micro.by_relation(empty, np.array([], dtype=np.int64)) == {}


def test_groups_without_rankings_are_nan_and_left_out() -> None:
    # relation 1 has no ranking, relations 0 and 2 one ranking each
    ranks, relation = np.array([2.0, 4.0]), np.array([0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the empty group is not divided by its count 0 (no RuntimeWarning)
        means, counts = micro.grouped_metrics(ranks, relation)
    assert counts.tolist() == [1, 0, 1]
    assert means["MR"][[0, 2]].tolist() == [2.0, 4.0] and np.isnan(means["MR"][1])
    # without names the keys are the relation ids; a relation without rankings has no row
    assert micro.by_relation(ranks, relation, hits=(3,)) == {
        "0": {"MR": 2.0, "MRR": 0.5, "Hits@3": 1.0}, "2": {"MR": 4.0, "MRR": 0.25, "Hits@3": 0.0}}
    assert micro.macro_over_relations(ranks, relation, hits=(3,)) == {"MR": 3.0, "MRR": 0.375, "Hits@3": 0.5}
    # groups: relation 0 -> group 0, relation 2 -> group 2, group 1 (relation 1) has no ranking
    assert micro.macro_over_groups(ranks, relation, np.array([0, 1, 2]), hits=(3,))["MR"] == 3.0


def test_all_four_categories() -> None:
    # one relation per category, relation r has a head ranking r + 1 and a tail ranking 10 * (r + 1)
    ranks = np.array([1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0])
    relation = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    side = np.array([0, 1] * 4)
    table = micro.by_category_side(ranks, relation, side, ["N-N", "1-N", "N-1", "1-1"], hits=(1,))
    expected = {"N-N/head": 1.0, "N-N/tail": 10.0, "1-N/head": 2.0, "1-N/tail": 20.0,
                "N-1/head": 3.0, "N-1/tail": 30.0, "1-1/head": 4.0, "1-1/tail": 40.0}
    assert {key: row["MR"] for key, row in table.items()} == expected
    assert list(table) == ["1-1/head", "1-1/tail", "1-N/head", "1-N/tail", "N-1/head", "N-1/tail",
                           "N-N/head", "N-N/tail"]
    assert micro.category_codes(["1-1", "1-N", "N-1", "N-N"]).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=whole("unknown relation category 'M-N'; expected one of ('1-1', '1-N', 'N-1', 'N-N')")):
        micro.category_codes(["1-1", "1-N", "M-N", "N-N", "K-K"])


def test_explicit_groups_and_domains() -> None:
    codes, labels = micro.group_codes(NAMES, {NAMES[0]: "b", NAMES[1]: "a", NAMES[2]: "b"})
    assert labels == ["a", "b"] and codes.tolist() == [1, 0, 1]
    assert micro.freebase_domain("film/film/genre") == "film"
    assert micro.freebase_domain("X/y") == "X"  # a non-Freebase name keeps its first segment as given
