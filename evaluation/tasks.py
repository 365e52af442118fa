"""Celery task of the evaluation app: thin (load the run by id, call the service).

Scoring trained systems may use the GPU, so the task is routed like pooling's rank tasks when the settings route
``evaluation.tasks.*``; otherwise it runs on the default queue (CPU is fine for evaluation-sized workloads).
Idempotent: the rank cache makes a redelivered task reuse what was scored; outputs are rewritten.
Transient failures (database connection, storage I/O) are retried explicitly with backoff.
"""
from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

TRANSIENT = (OperationalError, InterfaceError, OSError)
MAX_RETRIES = 3


def _retry_delay(retries: int) -> int:
    return min(60, 5 * 2**retries)


@shared_task(bind=True, name="evaluation.tasks.run_evaluation", max_retries=MAX_RETRIES, acks_late=True)
def run_evaluation(self, run_id: int) -> int:
    """Compute an EvaluationRun (services.evaluate.run_evaluation); returns its id."""
    from evaluation.models import EvaluationRun
    from evaluation.services.evaluate import run_evaluation as service

    run = EvaluationRun.objects.select_related("sample__kg", "pool").get(pk=run_id)
    try:
        service(run)
    except TRANSIENT as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=_retry_delay(self.request.retries))
        raise
    return run_id
