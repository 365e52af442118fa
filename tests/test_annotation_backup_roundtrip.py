"""Backup / restore of a campaign (issue 13): restoring into an empty instance and backing up again gives the same
archive, byte for byte; into an instance that already has the KG, pool and users they are matched by natural key;
differences and damaged archives are refused with nothing written."""
from __future__ import annotations

import io
import tarfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Judgment, LabelVersion
from annotation.services.backup import backup_campaign
from annotation.services.backup_format import BackupError
from annotation.services.campaign_archive import purge_campaign
from annotation.services.item_state import find_inconsistent_items
from annotation.services.restore import restore_campaign
from pooling.models import Entity, KnowledgeGraph, Pool
from tests._history_support import archive_members, judged_umls_campaign, wipe
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(storage):  # noqa: F811
    return judged_umls_campaign("roundtrip")


def test_restore_into_an_empty_instance_then_backup_again_gives_the_same_archive(judged, tmp_path):
    campaign = judged.campaign
    first = tmp_path / "first.tar.gz"
    call_command("backup_campaign", campaign.name, "-o", str(first), stdout=io.StringIO())
    judgments = sorted(Judgment.objects.filter(item__campaign=campaign).values_list(
        "user__username", "item__head__key", "item__relation__key", "item__tail__key", "answer", "source_url", "given_at"))
    wipe(campaign)
    assert not KnowledgeGraph.objects.filter(name="roundtrip-umls").exists()
    assert not get_user_model().objects.filter(username__startswith="roundtrip-").exists()

    out = io.StringIO()
    call_command("restore_campaign", str(first), stdout=out)
    assert "created: user roundtrip-ada" in out.getvalue() and "knowledge graph roundtrip-umls" in out.getvalue()
    restored = Campaign.objects.get(name=campaign.name)
    assert sorted(Judgment.objects.filter(item__campaign=restored).values_list(
        "user__username", "item__head__key", "item__relation__key", "item__tail__key", "answer", "source_url",
        "given_at")) == judgments
    assert find_inconsistent_items(restored) == []
    assert not get_user_model().objects.get(username="roundtrip-ann").has_usable_password()

    second = tmp_path / "second.tar.gz"
    backup_campaign(restored, second)
    a, b = archive_members(first), archive_members(second)
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []
    assert {"arrays/kg/train.npy", "label_versions.jsonl"} <= set(a) and any(n.startswith("arrays/rankings/") for n in a)


def test_restore_matches_what_is_already_here(judged, tmp_path):
    campaign = judged.campaign
    path = tmp_path / "b.tar.gz"
    backup_campaign(campaign, path)
    pool_pk, kg_pk = campaign.pool_id, campaign.pool.sample.kg_id
    purge_campaign(campaign)
    report = restore_campaign(path)
    assert report.campaign.pool_id == pool_pk and report.campaign.pool.sample.kg_id == kg_pk
    assert not [c for c in report.created if not c.startswith("campaign")]
    again = tmp_path / "again.tar.gz"
    backup_campaign(report.campaign, again)
    assert archive_members(again) == archive_members(path)

    # the same backup again: the campaign exists -> refused; under another name it is a second copy
    with pytest.raises(CommandError, match="already exists here"):
        call_command("restore_campaign", str(path))
    copy = restore_campaign(path, as_name="roundtrip-copy").campaign
    assert copy.pool_id == pool_pk
    assert Judgment.objects.filter(item__campaign=copy).count() == Judgment.objects.filter(item__campaign=report.campaign).count()


def test_a_different_kg_or_a_damaged_archive_is_refused_and_nothing_is_written(judged, tmp_path, storage):  # noqa: F811
    campaign = judged.campaign
    path = tmp_path / "b.tar.gz"
    backup_campaign(campaign, path)
    purge_campaign(campaign)
    kg = KnowledgeGraph.objects.get(name="roundtrip-umls")
    entity = Entity.objects.filter(kg=kg).order_by("index")[3]
    original_key = entity.key
    Entity.objects.filter(pk=entity.pk).update(key="renamed")
    counts = (Campaign.objects.count(), Judgment.objects.count(), LabelVersion.objects.count(), Pool.objects.count())
    files = sorted(p for p in storage.rglob("*") if p.is_file())
    with pytest.raises(BackupError, match=r"different entities \(index 3: here \(3, 'renamed'\)"):
        restore_campaign(path)
    assert (Campaign.objects.count(), Judgment.objects.count(), LabelVersion.objects.count(), Pool.objects.count()) == counts
    assert sorted(p for p in storage.rglob("*") if p.is_file()) == files
    Entity.objects.filter(pk=entity.pk).update(key=original_key)

    damaged = tmp_path / "damaged.tar.gz"
    with tarfile.open(path, "r:gz") as source, tarfile.open(damaged, "w:gz") as target:
        for info in source.getmembers():
            data = source.extractfile(info).read()
            if info.name == "judgments.jsonl":
                data = data.replace(b'"answer":"Y"', b'"answer":"N"', 1)
            info.size = len(data)
            target.addfile(info, io.BytesIO(data))
    with pytest.raises(CommandError, match="judgments.jsonl is damaged"):
        call_command("restore_campaign", str(damaged))
    assert Campaign.objects.count() == counts[0]
