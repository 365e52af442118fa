"""The evaluation a campaign file declares starts when judging is done (issue 17): applying the file marks the
campaign, the write that decides its last item starts the run (once, on commit), and applying again keeps it."""
from __future__ import annotations

import pytest

from annotation.lib.campaign_file import parse_campaign_file
from annotation.models import Campaign, Item
from annotation.services.campaign_apply import apply_campaign, plan_campaign
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from evaluation.models import EvaluationRun
from tests._campaign_file_support import write_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
EVALUATION = '\n[evaluation]\nwhen = "done"\nanalyses = false\nopen_world = false\ndepths = [0, 1, 2]\n'


def test_the_declared_evaluation_starts_with_the_last_decision(storage, tmp_path, django_capture_on_commit_callbacks):  # noqa: F811
    path = write_campaign(tmp_path, depth=1, extra=EVALUATION)
    apply_campaign(parse_campaign_file(path))
    campaign = Campaign.objects.get(name="cf")
    assert campaign.evaluate_when_done
    waiting = [a.line() for a in plan_campaign(parse_campaign_file(path)).actions if a.subject == "evaluation"]
    left = Item.objects.filter(campaign=campaign, is_gold=False, status="pending").count()
    assert waiting == [f". evaluation: starts when judging is done ({left} items left)"] and left > 1
    ann, bob = (campaign.members.get(username=u) for u in ("cf-ann", "cf-bob"))
    runs_seen = []
    with django_capture_on_commit_callbacks(execute=True):
        for user in (ann, bob):
            while (handed := next_item(campaign, user)) is not None:
                runs_seen.append(EvaluationRun.objects.filter(campaign=campaign).count())
                submit_judgment(handed.item, user, "Y", "https://en.wikipedia.org/wiki/X")
    assert set(runs_seen) == {0}  # nothing started before the last decision
    (run,) = EvaluationRun.objects.filter(campaign=campaign)
    assert run.name == "cf: campaign file" and run.status == "done", run.error
    assert run.options["analyses"] is False and run.options["depths"] == [0, 1, 2]
    campaign.refresh_from_db()
    assert not campaign.evaluate_when_done
    again = plan_campaign(parse_campaign_file(path))
    assert again.changes == [] and [a.line() for a in again.actions if a.subject == "evaluation"] == [
        f"= evaluation: run {run.pk}, done"]


def test_a_system_the_evaluation_names_must_exist(storage, tmp_path):  # noqa: F811
    """An unknown name was accepted, then `campaign evaluate` (or the last decision) failed with a traceback
    (found from outside); the plan refuses it, and applying writes nothing."""
    from annotation.services.campaign_apply import CampaignApplyError
    from pooling.models import KnowledgeGraph

    path = write_campaign(tmp_path, depth=1, extra=EVALUATION + 'systems = ["distmult", "nosuch"]\n')
    refusals = plan_campaign(parse_campaign_file(path)).refusals
    assert [(r.subject, r.detail) for r in refusals] == [
        ("evaluation", "evaluation.systems: no system 'nosuch' in the file or in cf-umls")]
    with pytest.raises(CampaignApplyError, match="nothing was applied"):
        apply_campaign(parse_campaign_file(path))
    assert not KnowledgeGraph.objects.filter(name="cf-umls").exists() and not Campaign.objects.exists()
    fine = write_campaign(tmp_path, depth=1, extra=EVALUATION + 'systems = ["distmult"]\n')
    assert plan_campaign(parse_campaign_file(fine)).refusals == []
