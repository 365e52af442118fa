"""A campaign file applied twice changes nothing the second time (issue 17): the plan of the second apply has no
change, every row is as the first apply left it, and the file `campaign export` writes back plans nothing."""
from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.lib.campaign_file import parse_campaign_file
from annotation.models import Campaign, CampaignFile, Item, Membership, QuestionTemplate
from annotation.services.campaign_apply import apply_campaign, plan_campaign
from pooling.models import KnowledgeGraph, Pool, PoolEntry, PoolHit, Sample, System
from tests._campaign_file_support import TRAIN, UMLS, campaign_toml, write_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
TRAIN_LINE = TRAIN.format(arch="distmult")


def snapshot() -> dict:
    """Every row the apply writes, with the fields it could change."""
    return {
        "kgs": list(KnowledgeGraph.objects.values_list("pk", "name", "num_entities")),
        "systems": list(System.objects.order_by("pk").values_list("pk", "name", "status", "checkpoint_file", "updated_at")),
        "samples": list(Sample.objects.values_list("pk", "name", "size")),
        "pools": list(Pool.objects.values_list("pk", "name", "depth", "status", "updated_at")),
        "entries": list(PoolEntry.objects.order_by("pk").values_list("pk", "head_id", "relation_id", "tail_id", "depth")),
        "hits": PoolHit.objects.count(),
        "campaigns": list(Campaign.objects.values_list(
            "pk", "name", "description", "gold_rate", "judging_order", "item_budget", "allowed_domains")),
        "items": list(Item.objects.order_by("pk").values_list(
            "pk", "entry_id", "status", "label", "label_origin", "rule", "queue_key", "is_gold", "gold_answer")),
        "members": sorted(Membership.objects.values_list("user__username", "role")),
        "users": sorted(get_user_model().objects.values_list("username", flat=True)),
        "templates": QuestionTemplate.objects.count(),
        "files": list(CampaignFile.objects.values_list("pk", "applied_at")),
    }


def test_applying_a_campaign_file_twice_changes_nothing_the_second_time(storage, tmp_path):  # noqa: F811
    path = write_campaign(tmp_path, systems=("distmult", "transe"),
                          extra='\n[templates]\n"isa" = "Is {head} a kind of {tail}?"\n')
    spec = parse_campaign_file(path)
    first = apply_campaign(spec, path=str(path))
    assert {a.subject for a in first.changes} >= {"knowledge graph cf-umls", "system distmult", "system transe",
                                                  "sample uniform-6-seed3", "campaign cf", "member cf-ann"}
    campaign = Campaign.objects.get(name="cf")
    items = Item.objects.filter(campaign=campaign, is_gold=False)
    assert items.count() == PoolEntry.objects.filter(pool=campaign.pool).count() > 0
    assert set(campaign.pool.systems.values_list("name", flat=True)) == {"distmult", "transe"}
    assert Item.objects.filter(campaign=campaign, is_gold=True).exists()  # gold rate 0.1
    assert QuestionTemplate.objects.get(campaign=campaign, relation__key="isa").text == "Is {head} a kind of {tail}?"
    assert sorted(Membership.objects.filter(campaign=campaign).values_list("user__username", "role")) == [
        ("cf-ada", "adjudicator"), ("cf-ann", "annotator"), ("cf-bob", "annotator")]
    before = snapshot()

    second_plan = plan_campaign(parse_campaign_file(path))
    assert second_plan.changes == [] and second_plan.refusals == [], second_plan.lines()
    second = apply_campaign(parse_campaign_file(path), path=str(path))
    assert second.changes == []
    assert snapshot() == before

    out = io.StringIO()
    call_command("campaign", "apply", str(path), stdout=out)
    assert "applied cf: nothing to change" in out.getvalue()
    assert snapshot() == before

    exported = tmp_path / "exported" / "cf.toml"
    exported.parent.mkdir()
    call_command("campaign", "export", "cf", "-o", str(exported), stderr=io.StringIO())
    text = exported.read_text()
    assert 'name = "cf"' in text and 'depth = 2' in text and 'isa = "Is {head} a kind of {tail}?"' in text
    assert plan_campaign(parse_campaign_file(exported)).changes == []
    assert snapshot() == before
    # an output path that cannot be written: one line, as export_judgments says it (tracebacks before)
    for bad, reason in ((tmp_path / "missing" / "cf.toml", "No such file or directory"),
                        (exported.parent, "Is a directory")):
        with pytest.raises(CommandError, match=rf"^{re.escape(str(bad))}: cannot write: {reason}$"):
            call_command("campaign", "export", "cf", "-o", str(bad), stderr=io.StringIO())
    assert not list(exported.parent.glob(".*.part"))  # no half-written file left beside it


def test_the_plan_writes_nothing_and_refusals_stop_the_apply(storage, tmp_path):  # noqa: F811
    path = write_campaign(tmp_path)
    out = io.StringIO()
    call_command("campaign", "apply", str(path), "--plan", stdout=out)
    assert "+ knowledge graph cf-umls" in out.getvalue() and "+ campaign cf" in out.getvalue()
    assert not KnowledgeGraph.objects.exists() and not Campaign.objects.exists()

    call_command("campaign", "apply", str(path), stdout=io.StringIO())
    before = snapshot()
    (tmp_path / "other").mkdir()
    other = write_campaign(tmp_path / "other", size=5)
    with pytest.raises(CommandError, match=r"campaign cf: judges sample uniform-6-seed3, not uniform-5-seed3"):
        call_command("campaign", "apply", str(other), stdout=io.StringIO())
    assert snapshot() == before


@pytest.mark.parametrize("options, refused", [
    ({"size": 100_000}, "! sample uniform-100000-seed3: cannot sample 100000 of the 661 test triples of cf-umls"),
    ({"depth": 1_000},
     "! pool depth1000-distmult: the pool depth must be between 1 and the 135 entities of cf-umls, got 1000"),
])
def test_the_plan_refuses_a_sample_or_pool_the_kg_cannot_give(storage, tmp_path, options, refused):  # noqa: F811
    """Found from outside: the plan said "0 refused", and the apply imported the KG and trained the systems before it
    failed at the sample or pool. Now the plan refuses them, whether the KG exists already or is still to import."""
    path = write_campaign(tmp_path, **options)
    for _ in ("KG still to import", "KG imported"):
        out = io.StringIO()
        with pytest.raises(CommandError, match=r"1 step\(s\) refused"):
            call_command("campaign", "apply", str(path), "--plan", stdout=out)
        assert refused in out.getvalue().splitlines()
        with pytest.raises(CommandError, match="nothing was applied"):
            call_command("campaign", "apply", str(path), stdout=io.StringIO())
        assert not System.objects.exists() and not Sample.objects.exists()
        if not KnowledgeGraph.objects.exists():
            call_command("import_kg", "cf-umls", str(UMLS), stdout=io.StringIO(), verbosity=0)


def test_the_plan_refuses_a_sample_file_that_is_not_a_file(storage, tmp_path):  # noqa: F811
    path = tmp_path / "cf.toml"
    path.write_text(campaign_toml().replace("size = 6\nseed = 3", f'file = "{tmp_path}"'))
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"1 step\(s\) refused"):
        call_command("campaign", "apply", str(path), "--plan", stdout=out)
    assert f"! sample {tmp_path.name}: {tmp_path} is not a file (the sample's triples or indices)" in out.getvalue()
    assert not KnowledgeGraph.objects.exists()


def test_a_system_named_again_as_a_checkpoint_is_refused(storage, tmp_path):  # noqa: F811
    """Found from outside: the trained system `distmult`, now given as `checkpoint = "/etc/passwd"`, was kept ("=
    imported checkpoint, ready"), and `campaign export` then wrote the new path as its source."""
    path = write_campaign(tmp_path)
    call_command("campaign", "apply", str(path), stdout=io.StringIO())
    before = snapshot()
    changed = tmp_path / "changed.toml"
    changed.write_text(path.read_text().replace(TRAIN_LINE, 'checkpoint = "/etc/passwd"'))
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"1 step\(s\) refused"):
        call_command("campaign", "apply", str(changed), "--plan", stdout=out)
    assert "! system distmult: a system of that name was trained here; the file asks to import /etc/passwd: give " \
           "it another name" in out.getvalue()
    assert snapshot() == before


def test_an_imported_system_is_kept_only_for_the_file_it_came_from():
    from annotation.services.campaign_apply import _other_source

    system = System(config={"imported": {"format": "pykeen", "file": "/models/a/trained_model.pkl"}})
    assert _other_source(system, "/models/a/trained_model.pkl") == ""
    assert _other_source(system, "/models/a") == ""  # PyKEEN's save_to_directory folder, whose model file it read
    assert _other_source(system, "/models/b/trained_model.pkl") == "it was imported from /models/a/trained_model.pkl"
    assert _other_source(System(config={"imported": {"format": "x"}}), "/any") == ""  # no file recorded: kept
    assert _other_source(System(config={"dim": 8}), "/any") == "a system of that name was trained here"
