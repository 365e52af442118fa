"""The agreement page and the quality page report one agreement: the same items, groups and can't-tell rules, so
the same counts and estimates under the same headings (they differed: the quality page left can't-tell pairs out
of its items and its percent, the agreement page kept rule-overruled items and grouped by the first domain only).

A campaign with every kind of item the two pages must leave out (rule, imported, gold), three annotators so that
there are several annotator pairs, can't-tell answers, disagreements and two source domains; every grouping of
both selectors is compared, and the overall row with a count made here from the judgments themselves."""
from __future__ import annotations

import math
import zlib
from collections import defaultdict

import pytest
from django.urls import reverse

from annotation.lib.agreement import yes_no_statistics
from annotation.models import Item, Judgment, Role
from annotation.selectors.agreement import GROUPINGS, agreement, judgment_pairs
from annotation.selectors.quality import agreement_with_ci
from annotation.services.gold import add_gold_items
from annotation.services.judging import submit_judgment
from tests._annotation_quality_support import gold_campaign, judge_all
from tests._annotation_support import users

pytestmark = pytest.mark.django_db


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b)


def _answer(item, user) -> str:
    if item.is_gold:
        return "N" if user.username.endswith("0") else "Y"  # 0% agreement if gold were counted
    return "YNCYYNYY"[zlib.crc32(f"{item.pk}-{user.pk}".encode()) % 8]  # C about one answer in eight


def _submit(item, user, answer, url, now):
    domain = "imdb.com" if item.pk % 2 else "wikidata.org"
    submit_judgment(item, user, answer, f"https://www.{domain}/Q{item.pk}", now=now,
                    quote="not stated" if answer == "C" else "")


@pytest.fixture
def campaign(tmp_path):
    campaign = gold_campaign(tmp_path, items=40, gold_rate=0.2, name="onedef")
    items = list(Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk"))
    Item.objects.filter(pk__in=[i.pk for i in items[:4]]).update(status="auto_negative", label="N",
                                                                 label_origin="rule", rule="type")
    Item.objects.filter(pk__in=[i.pk for i in items[4:7]]).update(status="imported", label="Y", label_origin="imported")
    add_gold_items(campaign)
    judge_all(campaign, users(campaign, Role.ANNOTATOR, 3), _answer, submit=_submit)
    return campaign


def test_both_selectors_give_the_same_rows_in_every_grouping(campaign):
    pairs = judgment_pairs(campaign)
    for by in GROUPINGS:
        plain = agreement(campaign, by, pairs=pairs)
        with_ci = agreement_with_ci(campaign, by, samples=50, pairs=pairs)
        assert plain, by
        assert [(r.group, r.items, r.cant_tell) for r in plain] == [(r.group, r.items, r.cant_tell) for r in with_ci]
        for row, ci in zip(plain, with_ci):
            for name in ("percent", "kappa", "ac1", "alpha"):
                assert _same(getattr(row, name), getattr(ci, name).estimate), (by, row.group, name)
    assert len(agreement(campaign, "pair", pairs=pairs)) == 3  # three annotators: three pairs
    assert {r.group for r in agreement(campaign, "domain", pairs=pairs)} == {"imdb.com", "wikidata.org"}


def test_the_overall_row_counts_the_judgments_of_the_human_items_only(campaign):
    by_item = defaultdict(list)
    for item_id, answer in Judgment.objects.filter(
        item__campaign=campaign, item__is_gold=False, item__label_origin__in=("", "unanimous", "adjudicated")
    ).order_by("item_id", "given_at", "pk").values_list("item_id", "answer"):
        by_item[item_id].append(answer)
    expected = yes_no_statistics([(a[0], a[1]) for a in by_item.values() if len(a) >= 2])
    assert expected.cant_tell > 0 and expected.items > expected.cant_tell  # the fixture has both kinds
    assert Item.objects.filter(campaign=campaign, label_origin="rule").exists()
    assert not Judgment.objects.filter(item__campaign=campaign, item__label_origin__in=("rule", "imported")).exists()
    (row,) = agreement(campaign)
    (ci,) = agreement_with_ci(campaign, samples=50)
    assert (row.items, row.cant_tell) == (ci.items, ci.cant_tell) == (expected.items, expected.cant_tell)
    assert math.isclose(row.percent, expected.percent) and math.isclose(ci.percent.estimate, expected.percent)
    assert ci.percent.low <= expected.percent <= ci.percent.high


def test_the_two_pages_show_the_same_overall_row(campaign, client):
    admin = users(campaign, Role.ADMIN, 1)[0]
    client.force_login(admin)
    agreement_page = client.get(reverse("annotation:manage_agreement", args=[campaign.name]))
    quality_page = client.get(reverse("annotation:manage_quality", args=[campaign.name]))
    overall = agreement_page.context["tables"][0]["rows"][0]
    ci_overall = quality_page.context["tables"][0]["rows"][0]
    assert (overall["group"], overall["items"], overall["cant_tell"]) == (
        ci_overall["group"], ci_overall["items"], ci_overall["cant_tell"])
    assert overall["values"][0] == round(ci_overall["percent"]["estimate"], 3)
