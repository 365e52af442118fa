"""Judged-set bundles (issue 17): export a judged campaign, import the bundle into an empty instance, export
again: the same files, byte for byte (folder and .tar.gz), with every judgment, adjudication, flag and label
origin back; a bundle whose files do not match its checksums is refused with nothing written."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Item, Judgment
from annotation.services.bundles import export_bundle
from annotation.services.filtering import _label_by_rule
from annotation.services.imports import import_judgments
from annotation.services.item_state import find_inconsistent_items
from evaluation.services.reusability import result_path
from kgpool.bundle import read_files
from pooling.models import KnowledgeGraph
from tests._history_support import judged_umls_campaign, wipe
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(storage, settings, tmp_path):  # noqa: F811
    settings.VAR_DIR = tmp_path / "var"
    people = judged_umls_campaign("bundled")
    campaign = people.campaign
    pending = list(Item.objects.filter(campaign=campaign, is_gold=False, status="pending", num_active=0)[:3])
    # a rule label, as the trivial filter writes it (this tiny pool has no candidate the rules rule out)
    _label_by_rule(Item.objects.filter(pk=pending.pop().pk), "cardinality")
    labels = tmp_path / "elsewhere.tsv"
    labels.write_text("".join(f"{i.head.key}\t{i.relation.key}\t{i.tail.key}\tY\n" for i in pending))
    assert import_judgments(campaign, labels).labelled == 2  # and imported ones
    path = result_path(people.campaign.name)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"summary": [{"group": "bundled-dm", "metric": "micro_MRR", "items_left_out": 3,
                                             "max_relative_drop": 0.25, "max_places_lost": 0, "tau": 1.0}]}))
    return people


def originals(campaign) -> dict:
    return {
        "judgments": sorted(Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).values_list(
            "item__head__key", "item__relation__key", "item__tail__key", "answer", "source_url", "given_at")),
        # open hand-outs are not part of a judged set: an item handed out but not judged comes back pending
        "labels": sorted((h, r, t, status if label else "undecided", label, origin, rule, flags, judged)
                         for h, r, t, status, label, origin, rule, flags, judged in Item.objects.filter(
                             campaign=campaign, is_gold=False).values_list(
                             "head__key", "relation__key", "tail__key", "status", "label", "label_origin", "rule",
                             "flags", "num_judgments")),
    }


def test_export_import_into_an_empty_instance_export_again_is_identical(judged, tmp_path):
    campaign = judged.campaign
    before = originals(campaign)
    origins = {row[5] for row in before["labels"] if row[5]}
    assert {"unanimous", "adjudicated", "rule", "audit", "imported"} <= origins  # every kind of label is in the round trip
    first_folder, first = export_bundle(campaign, tmp_path / "first")
    first_archive, _ = export_bundle(campaign, tmp_path / "first.tar.gz")
    assert read_files(first_archive) == read_files(first_folder) == {**first, "checksums.sha256":
                                                                       read_files(first_folder)["checksums.sha256"]}
    assert "| bundled-dm | micro_MRR | 3 | 25.0% | 0 | 1.000 |" in first["README.md"].decode()
    wipe(campaign)
    result_path(campaign.name).unlink()
    assert not KnowledgeGraph.objects.filter(name="bundled-umls").exists()

    out = io.StringIO()
    call_command("import_judgments", "--bundle", str(first_archive), stdout=out)
    assert "created: knowledge graph bundled-umls, sample s4, pool" in out.getvalue()
    restored = Campaign.objects.get(name="bundled")
    after = originals(restored)
    assert after["labels"] == before["labels"]
    assert [row[:3] + row[3:] for row in after["judgments"]] == before["judgments"]
    assert find_inconsistent_items(restored) == []

    second_folder, _ = export_bundle(restored, tmp_path / "second")
    second_archive, _ = export_bundle(restored, tmp_path / "again" / "first.tar.gz")  # same name, same top folder
    a, b = read_files(first_folder), read_files(second_folder)
    assert sorted(a) == sorted(b) and [name for name in a if a[name] != b[name]] == []
    assert second_archive.read_bytes() == first_archive.read_bytes()
    assert {"dataset.json", "README.md", "kg/train.txt", "qrels/final.txt", "qrels/annotators/A1.txt",
            "qrels/origins/unanimous.txt", "judgments.jsonl", "reusability.json"} <= set(a)


def test_a_damaged_bundle_is_refused_and_nothing_is_written(judged, tmp_path):
    folder, _files = export_bundle(judged.campaign, tmp_path / "b")
    wipe(judged.campaign)
    labels = folder / "labels.tsv"
    labels.write_text(labels.read_text().replace("\tN\n", "\tY\n", 1))
    with pytest.raises(CommandError, match=r"labels.tsv differs from checksums.sha256 \(nothing was imported\)"):
        call_command("import_judgments", "--bundle", str(folder), stdout=io.StringIO())
    assert not KnowledgeGraph.objects.filter(name="bundled-umls").exists() and not Campaign.objects.exists()
