"""Evaluation runs (the ``EvaluationRun`` rows behind the report pages): create, queue on Celery, compute in two
stages (``score_run`` fills the rank cache -- torch, GPU queue --, then ``run_evaluation`` computes metrics and
files), and store. A re-run with unchanged inputs recomputes nothing."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation import task_names
from evaluation.selectors.runs import campaign_decided_counts
from evaluation.services.compute import evaluate_sample
from evaluation.services.errors import EvaluationError
from evaluation.services.inputs import EvaluationInputs, ProgressFn, evaluable_systems, evaluation_inputs, score_systems
from evaluation.services.labels import LabelSource
from evaluation.services.report import json_safe, records, write_outputs
from evaluation.services.result import DEFINITIONS_VERSION, EvaluationOptions, EvaluationResult
from pooling.models import Pool, Sample, System


def result_dir(run: Any) -> str:
    return f"evaluation/runs/{run.pk}"


def create_run(sample: Sample, *, systems: list[System] | None = None, labels_file: str = "",
               pool: Pool | None = None, options: EvaluationOptions | None = None, name: str = "",
               campaign: Any = None) -> Any:
    """A pending EvaluationRun row (compute it with :func:`run_evaluation` or :func:`start_evaluation`).

    Labels: ``labels_file`` or ``campaign`` (its final labels; its pool gives the depths unless ``pool`` is given).
    """
    from evaluation.models import EvaluationRun
    from evaluation.services.labels import JudgmentsFile, LabelError, check_campaign_sample

    from evaluation.services.protocols import check_protocol_sources

    check_protocol_sources(options or EvaluationOptions(), sample, bool(labels_file) or campaign is not None)
    systems = systems if systems is not None else evaluable_systems(sample)
    if labels_file and campaign is not None:
        raise EvaluationError("give a labels file or a campaign, not both")
    if labels_file and not Path(labels_file).is_file():
        raise EvaluationError(f"labels file {labels_file} does not exist")
    if labels_file:  # read now, so a bad file is refused with its line and leaves no failed run behind
        try:
            JudgmentsFile(Path(labels_file)).judged_triples(sample.kg)
        except LabelError as exc:
            raise EvaluationError(str(exc)) from None
    if campaign is not None:
        try:
            check_campaign_sample(campaign, sample)
        except LabelError as exc:
            raise EvaluationError(str(exc)) from None
    run = EvaluationRun.objects.create(
        sample=sample, name=name or f"{sample.name}", labels_file=str(labels_file or ""), pool=pool, campaign=campaign,
        options=(options or EvaluationOptions()).to_dict(),
    )
    run.systems.set(systems)
    return run


def start_evaluation(run: Any, *, robust: bool = False) -> None:
    """Compute the run on Celery once the current transaction commits: first ``score_evaluation`` (model scoring
    of the judged pairs not in the rank cache; route ``evaluation.tasks.score_*`` to the GPU queue), then
    ``run_evaluation`` (metrics, analyses, files; CPU). ``robust``: an error (of the run itself, when tasks run
    in-process) is logged, not raised: the run records it."""
    from celery import chain, signature
    from django.db import transaction

    from evaluation.models import EvaluationRun

    run_id = run.pk
    EvaluationRun.objects.filter(pk=run_id).update(status=EvaluationRun.Status.PENDING, stage="queued", error="",
                                                   progress_done=0, progress_total=0)
    stages = chain(signature(task_names.SCORE_EVALUATION, args=(run_id,), immutable=True),
                   signature(task_names.RUN_EVALUATION, args=(run_id,), immutable=True))
    transaction.on_commit(stages.delay, robust=robust)


def run_source(run: Any) -> LabelSource | None:
    from evaluation.services.labels import CampaignLabels, JudgmentsFile

    if run.campaign_id:
        return CampaignLabels(run.campaign)
    return JudgmentsFile(Path(run.labels_file)) if run.labels_file else None


def _progress_writer(run: Any) -> ProgressFn:
    from evaluation.models import EvaluationRun

    def progress(stage: str, done: int, total: int) -> None:
        EvaluationRun.objects.filter(pk=run.pk).update(stage=stage[:100], progress_done=done, progress_total=total)

    return progress


def _fail(run: Any, exc: Exception) -> None:
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.FAILED,
                                                   error=f"{type(exc).__name__}: {exc}"[:10000],
                                                   finished_at=timezone.now())


def score_run(run: Any) -> dict[str, dict[str, int]]:
    """Stage 1 of a run: fill the rank cache for its systems (the only stage that needs torch / the GPU).

    Stores the per-system counts (pairs scored now / reused) in ``run.summary['scoring']``; idempotent."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    run.refresh_from_db()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING, error="", stage="scoring",
                                                   progress_done=0, progress_total=0, started_at=timezone.now())
    try:
        options = EvaluationOptions.from_dict(run.options)
        inputs = evaluation_inputs(run.sample, run_source(run), run.pool, options.depths)
        _ranks, stats = score_systems(inputs, list(run.systems.order_by("name")), device=options.device,
                                      progress=_progress_writer(run))
    except Exception as exc:
        _fail(run, exc)
        raise
    summary = dict(run.summary or {})
    summary["scoring"] = stats
    EvaluationRun.objects.filter(pk=run.pk).update(summary=summary)
    return stats


def run_inputs_digest(run: Any, inputs: EvaluationInputs) -> str:
    """What a run's outputs depend on: labels, pool, systems (model / kept scores files), options and the version
    of the definitions."""
    import hashlib

    from evaluation.services.ranks import system_fingerprint

    digest = hashlib.sha1(f"{inputs.digest()};definitions {DEFINITIONS_VERSION}".encode())
    for system in run.systems.order_by("name"):
        digest.update(f"{system.name}={system_fingerprint(system, run.sample)};".encode())
    digest.update(json.dumps(run.options, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def run_evaluation(run: Any, *, figures: bool = True, force: bool = False) -> Any:
    """Compute an EvaluationRun: evaluate, write its files under STORAGE_DIR, store the summary. Idempotent.

    A re-run only recomputes what changed: model scores come from the rank cache (only judged pairs added since
    are scored), and when the labels, pool, systems and options are all unchanged since the stored result
    (``summary['input_digest']``) and its files are there, nothing is recomputed (stage ``unchanged``) unless
    ``force``.
    """
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    run.refresh_from_db()
    previous = dict(run.summary or {})
    was_done = bool(run.result_dir) and run_file_exists(run)
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING, error="", stage="start",
                                                   progress_done=0, progress_total=0, started_at=timezone.now())
    try:
        options = EvaluationOptions.from_dict(run.options)
        source = run_source(run)
        inputs = evaluation_inputs(run.sample, source, run.pool, options.depths)
        digest = run_inputs_digest(run, inputs)
        if not force and was_done and previous.get("input_digest") == digest:
            previous.pop("scoring", None)
            EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.DONE, stage="unchanged",
                                                           progress_done=1, progress_total=1, summary=previous,
                                                           finished_at=timezone.now())
            run.refresh_from_db()
            return run
        result = evaluate_sample(run.sample, systems=list(run.systems.order_by("name")), source=source,
                                 pool=inputs.pool, options=options, progress=_progress_writer(run))
        scoring = previous.get("scoring")
        if scoring:  # stage 1 scored; the counts of this stage would all read "cached"
            result.rank_stats = {name: scoring.get(name, stats) for name, stats in result.rank_stats.items()}
        extra = {"input_digest": digest}
        if run.campaign_id:  # the report warns when the completed labels come from an unfinished campaign
            extra["campaign_items"] = campaign_decided_counts(run.campaign)
        store_result(run, result, figures=figures, extra_summary=extra)
    except Exception as exc:
        _fail(run, exc)
        raise
    run.refresh_from_db()
    return run


def run_file_exists(run: Any) -> bool:
    from pooling.storage import storage_path

    return bool(run.result_dir) and storage_path(f"{run.result_dir}/summary.json").is_file()


def store_result(run: Any, result: EvaluationResult, *, figures: bool = True,
                 extra_summary: dict[str, Any] | None = None) -> Any:
    """Write ``result``'s files under STORAGE_DIR for ``run`` and mark it done."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun
    from pooling.storage import storage_path

    relative = result_dir(run)
    files = write_outputs(result, storage_path(relative), figures=figures)
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=EvaluationRun.Status.DONE, result_dir=relative, files=files, seconds=result.seconds,
        summary={"kendall": records(result.kendall, "metric"), "systems": result.systems,
                 "label_sets": json_safe(result.label_stats), "rank_stats": json_safe(result.rank_stats),
                 "timings": json_safe(result.timings), **(extra_summary or {})},
        stage="done", error="", progress_done=1, progress_total=1, finished_at=timezone.now(),
    )
    run.refresh_from_db()
    return run
