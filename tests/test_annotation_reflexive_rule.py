"""The data-driven ``reflexive`` trivial rule (issue 15): a self-loop candidate (e, r, e) is labelled N
automatically only for a relation that train never uses on an entity and itself; previewed, applied and reverted
like the other rules (selector, service, ``filter_pool``, manage page)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Item
from annotation.selectors.filtering import filter_preview
from annotation.services.campaigns import create_campaign
from annotation.services.filtering import apply_filter, revert_auto_labels
from tests._annotation_support import tiny_pool
from tests._annotation_web_support import member

pytestmark = pytest.mark.django_db

# "likes" relates b to itself in train (self-love happens); "capital" never does.
TRAIN = [("fr", "capital", "paris"), ("de", "capital", "berlin"), ("a", "likes", "b"), ("b", "likes", "b"),
         ("b", "likes", "c"), ("c", "likes", "a")]
TEST = [("it", "capital", "rome"), ("a", "likes", "c")]
ENTRIES = [
    ("rome", "capital", "rome"),  # self-loop of a relation without any in train: N
    ("it", "capital", "it"),  # likewise
    ("a", "likes", "a"),  # self-loop of a relation that has one in train: kept
    ("it", "capital", "paris"),  # not a self-loop: kept
]
UMLS = Path(__file__).resolve().parents[1] / "datasets" / "umls"


@pytest.fixture
def campaign(tmp_path):
    return create_campaign("loops", tiny_pool(tmp_path, name="loops-kg", train=TRAIN, test=TEST, entries=ENTRIES))


def auto_negatives(campaign) -> set[tuple[str, str, str, str]]:
    return set(Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE)
               .values_list("head__key", "relation__key", "tail__key", "rule"))


def test_preview_apply_and_revert(campaign):
    report = filter_preview(campaign.pool, ["reflexive"])
    assert report.by_rule["reflexive"] == 2 and report.entries == 4
    assert report.by_relation == {"capital": {"reflexive": 2, "any": 2}}
    assert not auto_negatives(campaign)  # a preview writes nothing
    assert apply_filter(campaign, ["reflexive"]).applied == 2
    assert auto_negatives(campaign) == {("rome", "capital", "rome", "reflexive"), ("it", "capital", "it", "reflexive")}
    assert revert_auto_labels(campaign, rules=["reflexive"]).sent_back == 2
    assert not auto_negatives(campaign)


def test_filter_pool_command_and_default_rules(campaign):
    pool = campaign.pool
    ref = f"{pool.sample.kg.name}/{pool.sample.name}/{pool.name}"
    out = io.StringIO()
    call_command("filter_pool", ref, "--rules", "reflexive", "--dry-run", stdout=out)
    assert "would label 2 of 4 entries N" in out.getvalue()
    call_command("filter_pool", ref, stdout=io.StringIO())  # the default rules include it
    by_reflexive = {(h, r, t) for h, r, t, rule in auto_negatives(campaign) if "reflexive" in rule.split(",")}
    assert by_reflexive == {("rome", "capital", "rome"), ("it", "capital", "it")}
    assert ("a", "likes", "a") not in {(h, r, t) for h, r, t, _rule in auto_negatives(campaign)}
    call_command("filter_pool", ref, "--revert", "--rules", "reflexive", stdout=io.StringIO())
    assert not [rule for *_triple, rule in auto_negatives(campaign) if "reflexive" in rule]


def test_manage_page_previews_and_reverts_the_rule(campaign, client):
    client.force_login(member(campaign, "boss", "admin"))
    options = {"threshold": "1.5", "type_source": "dataset", "type_min_support": "2", "type_max_overlap": "0.0"}
    page = client.get(reverse("annotation:manage_filter", args=[campaign.name]), {"rules": ["reflexive"], **options})
    assert page.status_code == 200 and page.context["report"].by_rule["reflexive"] == 2
    client.post(reverse("annotation:manage_filter_apply", args=[campaign.name]), {"rules": ["reflexive"], **options})
    assert len(auto_negatives(campaign)) == 2
    assert "Revert reflexive" in client.get(reverse("annotation:manage_filter", args=[campaign.name])).content.decode()
    client.post(reverse("annotation:manage_filter_revert", args=[campaign.name]), {"rule": "reflexive"})
    assert not auto_negatives(campaign)


def test_on_umls_every_self_loop_is_ruled_out_and_nothing_else(tmp_path):
    rows = {split: [tuple(line.rstrip("\n").split("\t")) for line in (UMLS / f"{split}.txt").open(encoding="utf-8")]
            for split in ("train", "valid", "test")}
    assert not [t for t in rows["train"] if t[0] == t[2]]  # hand-checked: UMLS train has no self-loop at all
    loops = [("virus", "location_of", "virus"), ("virus", "isa", "virus"), ("cell", "part_of", "cell")]
    others = [("virus", "location_of", "cell"), ("cell", "isa", "virus")]
    pool = tiny_pool(tmp_path, name="umls-loops", train=rows["train"], valid=rows["valid"], test=rows["test"],
                     entries=loops + others)
    report = filter_preview(pool, ["reflexive"])
    assert report.by_rule["reflexive"] == len(loops)
    assert report.by_relation == {"location_of": {"reflexive": 1, "any": 1}, "isa": {"reflexive": 1, "any": 1},
                                  "part_of": {"reflexive": 1, "any": 1}}
