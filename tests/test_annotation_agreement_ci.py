"""Agreement suited to lopsided yes/no data (issue 8): AC1 and kappa on hand-computed 2x2 tables, bootstrap
intervals, breakdowns by group with rule, imported and gold labels left out."""
from __future__ import annotations

import io
import math

import pytest
from django.core.management import call_command

from annotation.lib.agreement import (
    Table,
    cohen_kappa,
    gwet_ac1,
    krippendorff_alpha_nominal,
    pairs_to_units,
    table_from_pairs,
    table_intervals,
    table_statistics,
)
from annotation.models import Item, Role
from annotation.selectors.quality import agreement_with_ci
from annotation.services.gold import add_gold_items
from tests._annotation_quality_support import gold_campaign, judge_all
from tests._annotation_support import users


def pairs_of(table: Table):
    return [("Y", "Y")] * table.yy + [("Y", "N")] * table.yn + [("N", "Y")] * table.ny + [("N", "N")] * table.nn


def test_lopsided_table_kappa_low_ac1_high():
    # 100 items, almost all yes: YY=90, YN=5, NY=5, NN=0.
    # p_o = 0.90. kappa: p1 = p2 = 0.95, p_e = 0.95^2 + 0.05^2 = 0.905 -> kappa = (0.90 - 0.905) / 0.095 = -0.0526
    # AC1: pi = 0.95, p_e = 2 * 0.95 * 0.05 = 0.095 -> AC1 = (0.90 - 0.095) / 0.905 = 0.8895
    # alpha: n_Y = 2 * 90 + 10 = 190, n_N = 10, alpha = 1 - 199 * 10 / (190 * 10) = -0.0474
    stats = table_statistics(90, 5, 5, 0)
    assert stats["percent"] == pytest.approx(0.9)
    assert stats["kappa"] == pytest.approx(-0.005 / 0.095)
    assert stats["ac1"] == pytest.approx(0.805 / 0.905)
    assert stats["alpha"] == pytest.approx(1 - 199 * 10 / (190 * 10))
    assert stats["kappa"] < 0.0 < 0.85 < stats["ac1"]


def test_balanced_table_hand_computed():
    # YY=20, YN=5, NY=10, NN=15: p_o = 0.7; kappa: p1 = 0.5, p2 = 0.6, p_e = 0.5 -> 0.4;
    # AC1: pi = 0.55, p_e = 0.495 -> 0.205 / 0.505; alpha = 1 - 99 * 15 / (55 * 45) = 0.4
    stats = table_statistics(20, 5, 10, 15)
    assert (stats["percent"], stats["kappa"]) == (pytest.approx(0.7), pytest.approx(0.4))
    assert stats["ac1"] == pytest.approx(0.205 / 0.505) and stats["alpha"] == pytest.approx(0.4)


@pytest.mark.parametrize("cells", [(90, 5, 5, 0), (20, 5, 10, 15), (3, 0, 1, 7), (0, 4, 2, 0), (12, 1, 0, 0)])
def test_vectorised_table_matches_the_pairwise_definitions(cells):
    table = Table(*cells)
    pairs = pairs_of(table)
    assert table_from_pairs(pairs) == table
    stats = table_statistics(*cells)
    for name, expected in (("kappa", cohen_kappa(pairs)), ("ac1", gwet_ac1(pairs, ("Y", "N"))),
                           ("alpha", krippendorff_alpha_nominal(pairs_to_units(pairs)))):
        assert (math.isnan(stats[name]) and math.isnan(expected)) or stats[name] == pytest.approx(expected), name


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate():
    table = Table(90, 5, 5, 0)
    first = table_intervals(table, samples=500, seed=7)
    assert first == table_intervals(table, samples=500, seed=7)
    for name, interval in first.items():
        assert interval.low <= interval.estimate <= interval.high, name
    assert first["ac1"].low > first["kappa"].high  # on lopsided data AC1 stays high, kappa does not
    empty = table_intervals(Table(0, 0, 0, 0))
    assert all(math.isnan(i.estimate) for i in empty.values())


@pytest.mark.django_db
def test_campaign_breakdowns_leave_rule_imported_and_gold_out(tmp_path):
    campaign = gold_campaign(tmp_path, items=30, gold_rate=0.2, name="agree")
    items = list(Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk"))
    Item.objects.filter(pk__in=[i.pk for i in items[:5]]).update(status="auto_negative", label="N", label_origin="rule", rule="type")
    Item.objects.filter(pk__in=[i.pk for i in items[5:8]]).update(status="imported", label="Y", label_origin="imported")
    add_gold_items(campaign)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    disagree = {i.pk for i in items[8:12]}

    def answer(item, user):
        if item.is_gold:
            return "N" if user == a else "Y"  # would be 0% agreement if counted
        return "N" if item.pk in disagree and user == b else "Y"

    def source(item, user):
        return 4000

    judge_all(campaign, [a, b], answer, url="https://www.imdb.com/title/tt1", ms_of=source)
    (overall,) = agreement_with_ci(campaign, samples=200)
    assert overall.items == 22 and overall.table == Table(18, 4, 0, 0)
    assert overall.percent.estimate == pytest.approx(18 / 22)
    assert overall.ac1.estimate == pytest.approx(table_statistics(18, 4, 0, 0)["ac1"])
    assert [r.group for r in agreement_with_ci(campaign, "domain", samples=50)] == ["imdb.com"]
    assert [r.group for r in agreement_with_ci(campaign, "category", samples=50)] == ["N-N"]
    assert [r.group for r in agreement_with_ci(campaign, "relation", samples=50)] == ["likes"]
    assert [(r.group, r.items) for r in agreement_with_ci(campaign, "depth", samples=50)] == [("1", 22)]
    assert [r.group for r in agreement_with_ci(campaign, "system", samples=50)] == ["unknown"]  # imported pool: no systems
    assert [r.items for r in agreement_with_ci(campaign, "pair", samples=50)] == [22]  # one pair of annotators
    with pytest.raises(ValueError):
        agreement_with_ci(campaign, "annotator")
    out = io.StringIO()
    call_command("campaign_quality", campaign.name, "--by", "overall", "--by", "domain", "--samples", "100", stdout=out)
    text = out.getvalue()
    assert "gold accuracy per annotator" in text and "WARNING" in text
    assert "n=22" in text and "AC1" in text and "consistency flags: 0 item(s)" in text
