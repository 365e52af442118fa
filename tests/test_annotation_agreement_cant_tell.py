"""Agreement with "can't tell" answers (issue 15), checked against values computed by hand.

Eight doubly judged items, rater 1 = the first answer: Y/Y x3, N/N x2, Y/N x1, C/Y x1, C/C x1.
- percent agreement over all 8, a can't tell a disagreement (C/C too): 5/8;
- Cohen's kappa over the 6 Y/N pairs: p_o = 5/6; rater 1 Y 4 of 6, rater 2 Y 3 of 6: p_e = (4*3 + 2*3)/36 = 1/2;
  kappa = (5/6 - 1/2) / (1/2) = 2/3;
- Gwet's AC1 over the 6: pi_Y = 7/12, p_e = 2 * 7/12 * 5/12 = 35/72; AC1 = (60/72 - 35/72) / (37/72) = 25/37;
- Krippendorff's alpha, can't tell missing (the C/Y and C/C items are not pairable): values Y 7, N 5, n = 12,
  disagreeing pairs 2: alpha = 1 - 11 * 2 / (2 * 7 * 5) = 24/35;
- 2 items with a can't tell.
"""
from __future__ import annotations

import math

import pytest

from annotation.lib.agreement import yes_no_statistics
from annotation.models import Item, Role
from annotation.selectors.agreement import agreement
from annotation.selectors.quality import agreement_with_ci
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

PAIRS = [("Y", "Y")] * 3 + [("N", "N")] * 2 + [("Y", "N"), ("C", "Y"), ("C", "C")]
URL = "https://www.wikidata.org/wiki/Q1"


def _check(stats_items, cant_tell, percent, kappa, ac1, alpha):
    assert (stats_items, cant_tell) == (8, 2)
    assert math.isclose(percent, 5 / 8) and math.isclose(kappa, 2 / 3) and math.isclose(ac1, 25 / 37)
    assert math.isclose(alpha, 24 / 35)


def test_the_statistics_by_hand():
    s = yes_no_statistics(PAIRS)
    _check(s.items, s.cant_tell, s.percent, s.kappa, s.ac1, s.alpha)


def test_only_can_t_tell_leaves_kappa_undefined_and_percent_zero():
    s = yes_no_statistics([("C", "Y"), ("C", "C")])
    assert (s.items, s.cant_tell, s.percent) == (2, 2, 0.0) and math.isnan(s.kappa) and math.isnan(s.alpha)


@pytest.mark.django_db
def test_a_campaign_s_agreement_pages_read_them_so(tmp_path):
    campaign = star_campaign(tmp_path, items=len(PAIRS))
    a, b = users(campaign, Role.ANNOTATOR, 2)
    pair_of = {}
    for pair in PAIRS:  # a answers every item first (rater 1), then b
        handed = next_item(campaign, a)
        pair_of[handed.item_id] = pair
        submit_judgment(handed.item, a, pair[0], URL, quote="unsure" if pair[0] == "C" else "")
    for _ in PAIRS:
        handed = next_item(campaign, b)
        answer = pair_of[handed.item_id][1]
        submit_judgment(handed.item, b, answer, URL, quote="unsure" if answer == "C" else "")
    assert Item.objects.filter(status="conflict").count() == 3  # Y/N, C/Y, C/C
    row, = agreement(campaign)
    _check(row.items, row.cant_tell, row.percent, row.kappa, row.ac1, row.alpha)
    ci, = agreement_with_ci(campaign, samples=50)  # the 2x2 table: the Y/N items, can't tell beside; same estimates
    assert (ci.items, ci.cant_tell, ci.table.yy, ci.table.yn, ci.table.ny, ci.table.nn) == (8, 2, 3, 1, 0, 2)
    _check(ci.items, ci.cant_tell, ci.percent.estimate, ci.kappa.estimate, ci.ac1.estimate, ci.alpha.estimate)
