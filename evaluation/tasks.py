"""Celery tasks of the evaluation app: thin (load the run by id, call the service).

A run is a chain of two tasks (fired by name by ``evaluation.services.runs.start_evaluation``):

1. ``evaluation.tasks.score_evaluation`` scores the judged (question, entity) pairs missing from the rank cache
   with the systems' models (torch; the GPU helps). Route it to the GPU queue with, in settings::

       CELERY_TASK_ROUTES["evaluation.tasks.score_*"] = {"queue": KGPOOL_GPU_QUEUE}

   (or add ``"evaluation.tasks.score_*": {"queue": KGPOOL_GPU_QUEUE}`` to the dict literal). Unrouted it runs on
   the default queue, which is fine on CPU for evaluation-sized work.
2. ``evaluation.tasks.run_evaluation`` computes metrics, analyses and files from the cached ranks (numpy only,
   default queue). It skips everything when the run's inputs did not change since its stored result.

Idempotent: the rank cache makes a redelivered task reuse what was scored; outputs are rewritten.
Transient failures (database connection, storage I/O) are retried explicitly with backoff.
"""
from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from evaluation import task_names

TRANSIENT = (OperationalError, InterfaceError, OSError)
MAX_RETRIES = 3


def _retry_delay(retries: int) -> int:
    return min(60, 5 * 2**retries)


@shared_task(bind=True, name=task_names.SCORE_EVALUATION, max_retries=MAX_RETRIES, acks_late=True)
def score_evaluation(self, run_id: int) -> int:
    """Fill the rank cache of an EvaluationRun (services.runs.score_run); returns its id."""
    from evaluation.models import EvaluationRun
    from evaluation.services.runs import score_run

    run = EvaluationRun.objects.select_related("sample__kg", "pool", "campaign__pool").get(pk=run_id)
    try:
        score_run(run)
    except TRANSIENT as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=_retry_delay(self.request.retries))
        raise
    return run_id


@shared_task(bind=True, name=task_names.RUN_EVALUATION, max_retries=MAX_RETRIES, acks_late=True)
def run_evaluation(self, run_id: int, force: bool = False) -> int:
    """Compute an EvaluationRun (services.runs.run_evaluation); returns its id."""
    from evaluation.models import EvaluationRun
    from evaluation.services.runs import run_evaluation as service

    run = EvaluationRun.objects.select_related("sample__kg", "pool", "campaign__pool").get(pk=run_id)
    try:
        service(run, force=force)
    except TRANSIENT as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=_retry_delay(self.request.retries))
        raise
    return run_id
