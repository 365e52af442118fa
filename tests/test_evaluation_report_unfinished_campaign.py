"""The report of a run made while its campaign was unfinished says so at the top, with how many items were decided
of how many (issue 15: 18 of 1,526 items decided and no warning); evaluations are linked from the site navigation
and the campaign pages."""
from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Item, Role
from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign
from tests._pool_support import storage, train_tiny  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

WARNING = "completed labels are partial"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def decide(items, label: str = "N") -> None:
    Item.objects.filter(pk__in=[i.pk for i in items]).update(status=Item.Status.AGREED, label=label)


def test_counts_of_the_run_are_shown_with_the_warning(tmp_path):
    campaign = nationality_campaign(tmp_path)
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign,
                                       summary={"campaign_items": {"decided": 18, "total": 1526}})
    page = signed_in(member(campaign, "ann", Role.ANNOTATOR)).get(f"/evaluation/{run.pk}/").content.decode()
    assert "Unfinished campaign: 18 of 1526 items decided" in page
    assert "(1.2%) when this run was computed" in page
    assert WARNING in page
    assert page.index("partial-labels") < page.index("Status:")  # at the top, before anything else of the run


def test_runs_stored_without_counts_count_the_campaign_now(tmp_path):
    campaign = nationality_campaign(tmp_path)
    items = list(Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk"))
    decide(items[:1])
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)
    client = signed_in(member(campaign, "ann", Role.ANNOTATOR))
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert f"1 of {len(items)} items decided" in page and WARNING in page

    decide(items)
    assert WARNING not in client.get(f"/evaluation/{run.pk}/").content.decode()


def test_no_warning_for_a_finished_campaign_or_a_run_without_one(tmp_path):
    campaign = nationality_campaign(tmp_path)
    finished = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign,
                                            summary={"campaign_items": {"decided": 3, "total": 3}})
    sparse = EvaluationRun.objects.create(sample=campaign.pool.sample)
    client = signed_in(member(campaign, "ann", Role.ANNOTATOR))
    for run in (finished, sparse):
        assert WARNING not in client.get(f"/evaluation/{run.pk}/").content.decode()


def test_evaluations_are_linked_from_the_navigation_and_the_campaign_pages(tmp_path, django_user_model):
    campaign = nationality_campaign(tmp_path)
    other = nationality_campaign(tmp_path / "other", name="other")
    ours = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)
    theirs = EvaluationRun.objects.create(sample=other.pool.sample, campaign=other)
    client = signed_in(member(campaign, "ann", Role.ANNOTATOR))
    link = '<a href="/evaluation/?campaign=nat">'
    assert '<a href="/evaluation/">Evaluations</a>' in client.get("/").content.decode()
    assert link in client.get("/campaigns/").content.decode()
    assert link in client.get("/campaigns/nat/").content.decode()

    listing = client.get("/evaluation/?campaign=nat").content.decode()
    assert f"/evaluation/{ours.pk}/" in listing and f"/evaluation/{theirs.pk}/" not in listing
    # the filter never widens what a user may see: not a member of the other campaign
    assert f"/evaluation/{theirs.pk}/" not in client.get("/evaluation/?campaign=other").content.decode()
    outsider = signed_in(django_user_model.objects.create_user("outsider", password="pw"))
    assert f"/evaluation/{ours.pk}/" not in outsider.get("/evaluation/?campaign=nat").content.decode()


def test_a_computed_run_keeps_the_counts_of_its_campaign(tmp_path, storage):
    from evaluation.services.runs import create_run, run_evaluation

    campaign = nationality_campaign(tmp_path)
    items = list(Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk"))
    decide(items[:2])
    kg = campaign.pool.sample.kg
    systems = [train_tiny(kg, arch, epochs=1, dim=8, seed=i) for i, arch in enumerate(("distmult", "transe"))]
    run = run_evaluation(create_run(campaign.pool.sample, systems=systems, campaign=campaign), figures=False)
    assert run.status == EvaluationRun.Status.DONE
    assert run.summary["campaign_items"] == {"decided": 2, "total": len(items)}

    decide(items)  # judged afterwards: the report still tells what the run was computed from
    page = signed_in(member(campaign, "ann", Role.ANNOTATOR)).get(f"/evaluation/{run.pk}/").content.decode()
    assert f"2 of {len(items)} items decided" in page and "when this run was computed" in page


def test_staff_start_an_evaluation_of_the_campaign_from_its_page(tmp_path):
    campaign = nationality_campaign(tmp_path)
    client = signed_in(member(campaign, "boss", Role.ADMIN, staff=True))
    start = f"/evaluation/new/?campaign={campaign.pk}&amp;sample={campaign.pool.sample_id}"
    assert f'<a href="{start}">Start an evaluation</a>' in client.get("/campaigns/nat/").content.decode()
    form = client.get(start.replace("&amp;", "&")).content.decode()
    assert f'<option value="{campaign.pk}" selected>' in form  # the form comes filled in
    annotator = signed_in(member(campaign, "ann", Role.ANNOTATOR))
    assert "Start an evaluation" not in annotator.get("/campaigns/nat/").content.decode()
