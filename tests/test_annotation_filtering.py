"""Trivial filtering on a campaign: questions from PoolHits, preview, apply, revert, the filter_pool command."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Item, Role
from annotation.selectors.filtering import filter_preview, pool_questions
from annotation.services.campaigns import create_campaign
from annotation.services.distribution import next_item
from annotation.services.filtering import apply_filter, revert_auto_labels
from tests._annotation_support import tiny_pool, users
from pooling.models import PoolEntry, PoolHit, Question, System

# "capital" is 1-1 in train, "likes" N-N.
TRAIN = [("fr", "capital", "paris"), ("de", "capital", "berlin"), ("it", "capital", "rome"),
         ("a", "likes", "b"), ("a", "likes", "c"), ("b", "likes", "a"), ("b", "likes", "c"), ("c", "likes", "a"),
         ("c", "likes", "b"), ("fr", "likes", "a")]
TEST = [("es", "capital", "madrid"), ("a", "likes", "d")]
ENTRIES = [
    ("es", "capital", "rome"),  # tail question (es, capital, ?) on 1-1: N
    ("it", "capital", "madrid"),  # head question (?, capital, madrid): N
    ("a", "likes", "c2"),  # N-N: kept
    ("b", "likes", "d"),  # head question (?, likes, d) on N-N: kept
]


@pytest.fixture
def pool(tmp_path):
    train = TRAIN + [("x", "likes", "c2")]
    return tiny_pool(tmp_path, name="capitals", train=train, test=TEST, entries=ENTRIES)


@pytest.mark.django_db
def test_preview_counts_per_rule_and_relation_without_writing(pool):
    campaign = create_campaign("caps", pool)
    report = filter_preview(pool, ["cardinality"])
    assert report.by_relation == {"capital": {"cardinality": 2, "any": 2}}
    assert report.by_rule["cardinality"] == 2 and report.entries == 4
    assert not Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE).exists()


@pytest.mark.django_db
def test_pool_hits_decide_which_questions_an_entry_answers(pool):
    entry = PoolEntry.objects.get(pool=pool, head__key="es", tail__key="rome")
    system = System.objects.create(kg=pool.sample.kg, name="s1")
    # With a hit, only the hit's question counts (here a head question), not the sample questions it matches.
    head_q = Question.objects.get(sample=pool.sample, side=0, relation__key="capital")
    PoolHit.objects.create(entry=entry, system=system, question=head_q, rank=1)
    pq = pool_questions(pool)
    assert pq.from_hits == 1
    row = pq.pks.tolist().index(entry.pk)
    assert pq.sides[pq.entry_of == row].tolist() == [0]


@pytest.mark.django_db
def test_apply_then_revert(pool):
    campaign = create_campaign("caps", pool)
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    report = apply_filter(campaign, ["cardinality"])
    assert report.applied == 2
    auto = Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE)
    assert set(auto.values_list("label", "label_origin", "rule")) == {("N", "rule", "cardinality")}
    # auto-labelled items are not handed out
    handed = set()
    while (assignment := next_item(campaign, annotator)) is not None:
        handed.add(assignment.item_id)
        from annotation.services.distribution import skip_item

        skip_item(assignment.item, annotator)
    assert handed.isdisjoint(auto.values_list("pk", flat=True))
    one = auto.first()
    assert revert_auto_labels(campaign, item_ids=[one.pk]).sent_back == 1
    one.refresh_from_db()
    assert (one.status, one.label, one.label_origin, one.rule) == ("pending", "", "", "")
    assert revert_auto_labels(campaign, rules=["cardinality"]).sent_back == 1


@pytest.mark.django_db
def test_filter_pool_command(pool):
    ref = f"{pool.sample.kg.name}/{pool.sample.name}/{pool.name}"
    out = io.StringIO()
    call_command("filter_pool", ref, "--rules", "cardinality", "--dry-run", stdout=out)
    assert "capital\t2\t2" in out.getvalue() and "would label 2 of 4 entries N" in out.getvalue()
    campaign = create_campaign("caps", pool)
    out = io.StringIO()
    call_command("filter_pool", str(pool.pk), "--rules", "cardinality,type", stdout=out)
    assert "caps: 2 items labelled N" in out.getvalue()  # no type fires: the candidates are unseen or consistent
    out = io.StringIO()
    call_command("filter_pool", ref, "--revert", stdout=out)
    assert not Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE).exists()
