"""Thin Celery tasks of the annotation app: load by id, call a service, retry explicitly."""
from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from annotation.task_names import EVALUATE_WHEN_DONE, REKEY_QUEUE

MAX_RETRIES = 3


@shared_task(bind=True, name=REKEY_QUEUE, max_retries=MAX_RETRIES, acks_late=True)
def rekey_queue_task(self, campaign_id: int) -> dict:
    """Re-key an adaptive campaign's queue from its final labels (fired on commit by the write that made one)."""
    from annotation.models import Campaign
    from annotation.services.judging_order import rekey_queue

    campaign = Campaign.objects.select_related("pool__sample__kg").filter(pk=campaign_id).first()
    if campaign is None:
        return {"skipped": "no such campaign"}
    try:
        report = rekey_queue(campaign)
    except OperationalError as exc:  # a lock timeout or a lost connection: try again shortly
        raise self.retry(exc=exc, countdown=5) from exc
    return {"order": report.order, "queued": report.queued, "written": report.written, "done": report.done}


@shared_task(bind=True, name=EVALUATE_WHEN_DONE, max_retries=MAX_RETRIES, acks_late=True)
def evaluate_when_done_task(self, campaign_id: int) -> dict:
    """Start the campaign file's evaluation if judging is done (fired on commit by a write that made a label final)."""
    from annotation.models import Campaign
    from annotation.services.campaign_evaluation import evaluate_if_done

    campaign = Campaign.objects.select_related("pool__sample__kg").filter(pk=campaign_id).first()
    if campaign is None:
        return {"skipped": "no such campaign"}
    try:
        run = evaluate_if_done(campaign)
    except OperationalError as exc:
        raise self.retry(exc=exc, countdown=5) from exc
    return {"run": run.pk if run is not None else None}
