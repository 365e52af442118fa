"""Answer-wise MR / MRR / Hits@K and their breakdowns on a hand-computed example."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core import micro

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
    with pytest.raises(ValueError):
        micro.micro_metrics(np.array([0.0, 2.0]))
