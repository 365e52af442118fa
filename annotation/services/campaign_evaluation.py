"""Writes: the evaluation a campaign file declares (``[evaluation]``), started once judging is done.

With ``when = "done"``, ``campaign apply`` marks the campaign (``Campaign.evaluate_when_done``): every write that
makes a label final then queues :func:`evaluate_if_done` (``judging_order.label_final``), which starts the run
once judging is done (nothing pending, in progress or in conflict, gold checks apart; under a spent item budget only
the started items count) and clears the mark. ``campaign apply`` also starts it when it finds judging done, and
``campaign evaluate NAME`` at any time. A started run is named ``<campaign>: campaign file`` and kept: applying again starts none while its
options are unchanged.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction

from annotation.lib.campaign_file import CampaignSpec, spec_from_dict
from annotation.models import Campaign, CampaignFile, Item
from annotation.services.errors import AnnotationError

DECLARED_RUN = "campaign file"  # name suffix of the evaluation runs started for a campaign file


class CampaignApplyError(AnnotationError):
    """A campaign file cannot be applied (one line); what the refused step would have written was not written."""


def judging_left(campaign: Campaign) -> int:
    """Items people still have to decide (gold checks apart); under a spent item budget, only started ones."""
    from annotation.services.judging_order import STARTED

    open_statuses = [Item.Status.IN_PROGRESS, Item.Status.CONFLICT]
    items = Item.objects.filter(campaign=campaign, is_gold=False)
    started = items.filter(status__in=STARTED).count()
    budget_spent = campaign.item_budget is not None and started >= campaign.item_budget
    if not budget_spent:
        open_statuses.append(Item.Status.PENDING)
    return items.filter(status__in=open_statuses).count()


def campaign_spec(campaign: Campaign) -> CampaignSpec | None:
    record = CampaignFile.objects.filter(campaign=campaign).first()
    return spec_from_dict(record.spec) if record is not None and record.spec else None


def declared_options(spec: CampaignSpec) -> dict[str, Any]:
    from evaluation.services.result import EvaluationOptions

    return EvaluationOptions(**(spec.evaluation.options() if spec.evaluation else {})).to_dict()


def declared_run(campaign: Campaign):
    from evaluation.models import EvaluationRun

    return EvaluationRun.objects.filter(campaign=campaign, name=f"{campaign.name}: {DECLARED_RUN}").order_by(
        "-created_at", "-pk").first()


def start_declared_evaluation(campaign: Campaign, spec: CampaignSpec | None = None):
    """Create and queue the evaluation declared by the campaign's file (``[evaluation]``; the defaults without
    one) on the campaign's final labels; returns the run. Runs on commit (in-process when embedded)."""
    from evaluation.services.errors import EvaluationError
    from evaluation.services.inputs import evaluable_systems
    from evaluation.services.result import EvaluationOptions
    from evaluation.services.runs import create_run, start_evaluation

    spec = spec or campaign_spec(campaign)
    evaluation = spec.evaluation if spec is not None else None
    sample = campaign.pool.sample
    try:
        systems = evaluable_systems(sample, list(evaluation.systems) if evaluation and evaluation.systems else None)
        with transaction.atomic():
            run = create_run(sample, systems=systems, campaign=campaign, pool=campaign.pool,
                             options=EvaluationOptions.from_dict(declared_options(spec) if spec else {}),
                             name=f"{campaign.name}: {DECLARED_RUN}")
            start_evaluation(run, robust=True)  # a failure is recorded on the run
    except EvaluationError as exc:
        raise CampaignApplyError(str(exc)) from None
    run.refresh_from_db()
    return run


def evaluate_if_done(campaign: Campaign):
    """Start the declared evaluation if the campaign is marked and judging is done; the run, or None. The mark is
    cleared by the one call that starts it (compare-and-set), so concurrent final labels start one run."""
    if not campaign.evaluate_when_done or judging_left(campaign):
        return None
    if not Campaign.objects.filter(pk=campaign.pk, evaluate_when_done=True).update(evaluate_when_done=False):
        return None
    return start_declared_evaluation(campaign)
