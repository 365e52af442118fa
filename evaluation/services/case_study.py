"""The FB15k-237 case study (issue 7), reproduced end to end with kgpool's own services.

Steps (each idempotent; a second run reuses what is already there and says so):

1. ``kg``        import the KG (reused when a KG of that name exists with the same counts)
2. ``sample``    the seed-42 uniform sample (checked against the published ``sample_idxs.txt``); with
                 ``sample_size`` smaller than the published sample, its first ``sample_size`` triples
3. ``systems``   train one system per architecture with the profile's settings (a ready system with the same
                 training config is reused; a changed config trains a new system under a new name)
4. ``pool``      the depth-k pool of those systems (reused when the same systems/depth pool is done)
5. ``filter``    a campaign over the pool and the trivial filters (type + cardinality rules)
6. ``coverage``  how much of the pool the published judgments cover (set arithmetic on keys), then the
                 published labels imported into the campaign (what would be left for people to judge)
7. ``evaluate``  every system on the sparse and completed (published) labels: micro/macro, PROBE, tau, per
                 pooling depth, per relation category; reused when nothing it depends on changed
                 (fingerprint of systems, sample, pool, labels file and options)

Files go to ``out``: ``case_study.json`` (every number, step timings), ``report.md`` (the tables for the
docs), and ``evaluation/`` (the evaluation service's CSV/JSON/PNG outputs).
torch is only imported by the training / ranking services this calls.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.services.result import DEFINITIONS_VERSION
from pooling.models import KnowledgeGraph, Pool, Sample, System

ProgressFn = Callable[[str, int, int], None]
LogFn = Callable[[str], None]

DEFAULT_SYSTEMS = ("transe", "rotate", "distmult", "complex", "rescal", "conve")

#: Training settings per profile and architecture (``dim`` is the entity dimension for TuckER).
#: full  = the README's FB15k-237 CPU settings (about 10-20 min per model on a 2-core CPU, minutes on a GPU);
#: quick = reduced dimensions and 1-2 epochs so the six default systems train in about half an hour on a 2-core
#:         CPU shared with other jobs (validation only at the end, no early stopping);
#: tiny  = the in-suite version (seconds; the models are barely trained).
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "full": {
        "transe": {"dim": 200, "epochs": 12, "lr": 0.005, "batch_size": 512, "hyperparameters": {"p": 2}},
        "rotate": {"dim": 100, "epochs": 10, "lr": 0.005, "batch_size": 512},
        "distmult": {"dim": 200, "epochs": 12, "lr": 0.005, "batch_size": 512},
        "complex": {"dim": 100, "epochs": 12, "lr": 0.005, "batch_size": 512},
        "rescal": {"dim": 128, "epochs": 12, "lr": 0.003, "batch_size": 512},
        "conve": {"dim": 200, "epochs": 8, "lr": 0.003, "batch_size": 512},
        "tucker": {"dim": 100, "epochs": 8, "lr": 0.005, "batch_size": 512, "hyperparameters": {"relation_dim": 30}},
    },
    # about an hour on one core of this 2-core CPU: enough epochs for ~85% of the published MRRs
    "medium": {
        "transe": {"dim": 100, "epochs": 5, "lr": 0.005, "batch_size": 512, "hyperparameters": {"p": 2}},
        "rotate": {"dim": 100, "epochs": 5, "lr": 0.01, "batch_size": 512},
        "distmult": {"dim": 200, "epochs": 5, "lr": 0.005, "batch_size": 512},
        "complex": {"dim": 100, "epochs": 5, "lr": 0.005, "batch_size": 512},
        "rescal": {"dim": 128, "epochs": 4, "lr": 0.003, "batch_size": 512},
        "conve": {"dim": 200, "epochs": 4, "lr": 0.003, "batch_size": 512},
        "tucker": {"dim": 100, "epochs": 3, "lr": 0.005, "batch_size": 512, "hyperparameters": {"relation_dim": 30}},
    },
    "quick": {
        "transe": {"dim": 100, "epochs": 2, "lr": 0.005, "batch_size": 512, "hyperparameters": {"p": 2}},
        "rotate": {"dim": 100, "epochs": 2, "lr": 0.01, "batch_size": 512},
        "distmult": {"dim": 100, "epochs": 1, "lr": 0.005, "batch_size": 512},
        "complex": {"dim": 50, "epochs": 1, "lr": 0.005, "batch_size": 512},
        "rescal": {"dim": 64, "epochs": 1, "lr": 0.003, "batch_size": 512},
        "conve": {"dim": 100, "epochs": 1, "lr": 0.003, "batch_size": 512},
        "tucker": {"dim": 50, "epochs": 1, "lr": 0.005, "batch_size": 512, "hyperparameters": {"relation_dim": 20}},
    },
    "tiny": {
        "transe": {"dim": 16, "epochs": 1, "lr": 0.01, "batch_size": 512, "hyperparameters": {"p": 2}},
        "rotate": {"dim": 8, "epochs": 1, "lr": 0.01, "batch_size": 512},
        "distmult": {"dim": 16, "epochs": 1, "lr": 0.01, "batch_size": 512},
        "complex": {"dim": 8, "epochs": 1, "lr": 0.01, "batch_size": 512},
        "rescal": {"dim": 8, "epochs": 1, "lr": 0.01, "batch_size": 512},
        "conve": {"dim": 16, "epochs": 1, "lr": 0.01, "batch_size": 512},
        "tucker": {"dim": 16, "epochs": 1, "lr": 0.01, "batch_size": 512, "hyperparameters": {"relation_dim": 8}},
    },
}

#: Filtered test MRR on FB15k-237 reported in the literature for each architecture (both sides, filtered),
#: shown next to ours. Sources: TransE/RESCAL/DistMult/ComplEx/ConvE LibKGE (Ruffinelli et al., ICLR 2020),
#: RotatE (Sun et al. 2019), TuckER (Balazevic et al. 2019).
PUBLISHED_MRR = {
    "transe": (0.313, "LibKGE (Ruffinelli et al. 2020)"),
    "rotate": (0.338, "Sun et al. 2019"),
    "distmult": (0.343, "LibKGE (Ruffinelli et al. 2020)"),
    "complex": (0.348, "LibKGE (Ruffinelli et al. 2020)"),
    "rescal": (0.356, "LibKGE (Ruffinelli et al. 2020)"),
    "conve": (0.339, "LibKGE (Ruffinelli et al. 2020)"),
    "tucker": (0.358, "Balazevic et al. 2019"),
}

#: Reference numbers of the published campaign (SPEC 3, 4.1, 1).
PUBLISHED = {
    "sample_size": 1023,
    "sample_kl": 0.0889,
    "pool_entries": 21469,
    "pool_questions": 1745,
    "trivial_filter": 8899,
    "trivial_filter_our_rule_on_published_pool": 8902,
    "judgments": 22492,
    "judgments_yes": 2738,
    "judgments_no": 19754,
    "tau_micro_mrr_13_systems": -0.23,
}


# markers in the case-study campaign's description: which of its writes are done (steps 5 and 6)
FILTERED_MARK = "; trivial filters applied"
IMPORTED_MARK = "; published labels imported"


class CaseStudyError(Exception):
    """The case study cannot go on (missing files, sample mismatch, no systems); the message says why."""


@dataclass
class CaseStudyConfig:
    data_dir: Path
    pooled_dir: Path
    out: Path
    kg_name: str = "fb15k-237"
    profile: str = "quick"
    systems: tuple[str, ...] = DEFAULT_SYSTEMS
    device: str | None = None
    threads: int | None = 1
    sample_size: int | None = None  # None: the whole published sample
    seed: int = 42
    depth: int = 10
    skip_training: bool = False
    analyses: bool = True
    figures: bool = True
    train_overrides: dict[str, Any] = field(default_factory=dict)  # e.g. {"epochs": 1} for every system

    @property
    def judgments(self) -> Path:
        return Path(self.pooled_dir) / "judgments.tsv"

    @property
    def published_indices_file(self) -> Path:
        return Path(self.pooled_dir) / "sample_idxs.txt"


@dataclass
class StepReport:
    step: str
    seconds: float
    reused: bool
    detail: dict[str, Any]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def _digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------ steps
def step_kg(config: CaseStudyConfig, progress: ProgressFn = _no_progress) -> tuple[KnowledgeGraph, dict[str, Any], bool]:
    from pooling.services.kg_import import import_kg

    kg = KnowledgeGraph.objects.filter(name=config.kg_name).first()
    reused = kg is not None and bool(kg.arrays_file)
    if kg is None:
        if not (Path(config.data_dir) / "train.txt").is_file():
            raise CaseStudyError(f"{config.data_dir} has no train.txt (FB15k-237 folder expected)")
        kg = import_kg(config.kg_name, config.data_dir, progress=progress)
    elif not kg.arrays_file:
        raise CaseStudyError(f"knowledge graph {config.kg_name!r} exists but has no arrays; re-import it")
    detail = {"name": kg.name, "entities": kg.num_entities, "relations": kg.num_relations, "train": kg.num_train,
              "valid": kg.num_valid, "test": kg.num_test}
    return kg, detail, reused


def published_indices(config: CaseStudyConfig) -> np.ndarray:
    path = config.published_indices_file
    if not path.is_file():
        raise CaseStudyError(f"{path} not found (the published sample)")
    return np.array([int(line) for line in path.read_text().split()], dtype=np.int64)


def step_sample(config: CaseStudyConfig, kg: KnowledgeGraph) -> tuple[Sample, dict[str, Any], bool]:
    from pooling.engine.sampling import sample_test_indices as draw_indices
    from pooling.selectors.pools import sample_test_indices
    from pooling.services.samples import create_sample, draw_sample

    published = published_indices(config)
    full_size = len(published)
    name = f"uniform-{full_size}-seed{config.seed}"
    full = Sample.objects.filter(kg=kg, name=name).first()
    reused = full is not None
    if full is None:
        full = draw_sample(kg, size=full_size, seed=config.seed, name=name)
    drawn = sample_test_indices(full)
    detail: dict[str, Any] = {"drawn": full.name, "drawn_size": len(drawn),
                              "equals_published": bool(np.array_equal(drawn, published)),
                              "kl_divergence": full.kl_divergence}
    if not detail["equals_published"]:
        raise CaseStudyError(f"the seed-{config.seed} sample differs from {config.published_indices_file}")
    sample = full
    if config.sample_size is not None and config.sample_size < full_size:
        size = config.sample_size
        if size < 1:
            raise CaseStudyError("--sample-size must be at least 1")
        # the engine's draw must agree with the stored sample (same function as draw_sample)
        assert np.array_equal(np.asarray(draw_indices(kg.num_test, full_size, config.seed)), drawn)
        small_name = f"{name}-first{size}"
        small = Sample.objects.filter(kg=kg, name=small_name).first()
        reused = small is not None
        if small is None:
            small = create_sample(kg, name=small_name, method=Sample.Method.FILE, seed=config.seed,
                                  indices=drawn[:size], source=f"first {size} of {name}")
        sample = small
        detail.update({"cut_down": small.name, "size": size,
                       "equals_published_prefix": bool(np.array_equal(sample_test_indices(small), published[:size])),
                       "kl_divergence": small.kl_divergence})
    else:
        detail["size"] = full_size
    detail["questions"] = sample.questions.count()
    return sample, detail, reused


def system_settings(config: CaseStudyConfig, architecture: str) -> dict[str, Any]:
    profile = PROFILES.get(config.profile)
    if profile is None:
        raise CaseStudyError(f"unknown profile {config.profile!r} (choose {', '.join(PROFILES)})")
    if architecture not in profile:
        raise CaseStudyError(f"unknown architecture {architecture!r} (choose {', '.join(profile)})")
    settings = {**profile[architecture], **config.train_overrides}
    settings.setdefault("eval_every", settings["epochs"])  # validate at the end (and pick the best evaluation)
    settings.setdefault("patience", 0)
    return settings


def _comparable(system_config: dict[str, Any]) -> dict[str, Any]:
    # what determines the trained model (not where it ran nor what the run recorded)
    return {k: v for k, v in system_config.items()
            if k not in ("device", "num_threads", "epochs_run", "best_epoch", "train_seconds", "eval_batch_size",
                         "test_triples_ranked")}


def step_systems(config: CaseStudyConfig, kg: KnowledgeGraph, progress: ProgressFn = _no_progress,
                 log: LogFn = print) -> tuple[list[System], dict[str, Any], bool]:
    from pooling.services.systems import create_system, train_system, training_config

    systems, rows, all_reused = [], [], True
    for architecture in config.systems:
        settings = system_settings(config, architecture)
        wanted = training_config(architecture, device=config.device, num_threads=config.threads, seed=0,
                                 **settings)
        base = f"{architecture}-{config.profile}"
        candidates = list(System.objects.filter(kg=kg, name__startswith=base).order_by("pk"))
        match = next((s for s in candidates if _comparable(s.config) == _comparable(wanted)), None)
        started = time.perf_counter()
        reused = match is not None and match.status == System.Status.READY
        if config.skip_training and not reused:
            log(f"  {architecture}: no trained system with these settings; skipped (--skip-training)")
            continue
        unfinished = next((s for s in candidates if s.name == base and s.status != System.Status.READY), None)
        if match is None and unfinished is not None:  # an interrupted run with other settings: replace them
            System.objects.filter(pk=unfinished.pk).update(config=wanted, status=System.Status.PENDING, error="")
            match = unfinished
        if match is None:
            taken = {s.name for s in candidates}
            version = 2
            name = base
            while name in taken:  # a ready system with other settings keeps its name (pools, ranks point at it)
                name, version = f"{base}-v{version}", version + 1
            match = create_system(kg, architecture, name=name, config=wanted)
        if not reused:
            all_reused = False
            log(f"  {match.name}: training ({settings['epochs']} epochs, dim {settings['dim']})")
            match = train_system(match, progress=progress)
        else:
            log(f"  {match.name}: reused (valid MRR {match.valid_mrr:.3f})")
        published, source = PUBLISHED_MRR.get(architecture, (None, ""))
        rows.append({"system": match.name, "architecture": architecture, "dim": settings["dim"],
                     "epochs": match.config.get("epochs_run", settings["epochs"]), "valid_mrr": match.valid_mrr,
                     "test_mrr": match.test_mrr, "published_test_mrr": published, "published_source": source,
                     "train_seconds": match.config.get("train_seconds"), "reused": reused,
                     "step_seconds": round(time.perf_counter() - started, 1)})
        systems.append(match)
    if not systems:
        raise CaseStudyError("no system to pool from (train some: run without --skip-training)")
    return systems, {"systems": rows}, all_reused


def step_pool(config: CaseStudyConfig, sample: Sample, systems: list[System],
              progress: ProgressFn = _no_progress) -> tuple[Pool, dict[str, Any], bool]:
    from pooling.services.pools import build_pool_now, create_pool

    pool = create_pool(sample, systems, config.depth)
    reused = pool.status == Pool.Status.DONE
    if not reused:
        pool = build_pool_now(pool, device=config.device, progress=progress)
    return pool, pool_stats(pool), reused


def pool_stats(pool: Pool) -> dict[str, Any]:
    from pooling.models import PoolEntry, PoolHit
    from pooling.selectors.pools import known_triples, pool_entry_array

    kg = pool.sample.kg
    entries = pool_entry_array(pool)
    known = known_triples(kg)
    num_e, num_r = kg.num_entities, kg.num_relations
    keys = lambda t: (t[:, 0] * num_r + t[:, 1]) * num_e + t[:, 2]  # noqa: E731
    known_in_pool = int(np.isin(keys(entries[:, :3]), keys(known)).sum()) if len(entries) else 0
    hits = PoolHit.objects.filter(entry__pool=pool)
    questions = hits.values("question_id").distinct().count()
    per_depth = np.bincount(entries[:, 3].clip(min=0), minlength=pool.depth + 1)[1:].tolist() if len(entries) else []
    per_system = {}
    for system in pool.systems.order_by("name"):
        retrieved = set(hits.filter(system=system).values_list("entry_id", flat=True))
        per_system[system.name] = {"entries": len(retrieved)}
    only: dict[str, int] = {}  # entries retrieved by one system only
    unique = PoolEntry.objects.filter(pool=pool, num_systems=1).values_list("pk", "hits__system__name").distinct()
    for _pk, system_name in unique.iterator():
        only[system_name] = only.get(system_name, 0) + 1
    for name in per_system:
        per_system[name]["only_this_system"] = only.get(name, 0)
    return {"name": pool.name, "depth": pool.depth, "entries": int(len(entries)), "questions_with_entries": questions,
            "sample_questions": pool.sample.questions.count(), "entries_per_depth": per_depth,
            "known_triples_in_pool": known_in_pool, "per_system": per_system}


def step_filter(config: CaseStudyConfig, pool: Pool) -> tuple[Any, dict[str, Any], bool]:
    from annotation.models import Campaign
    from annotation.selectors.filtering import filter_preview
    from annotation.services.campaigns import create_campaign
    from annotation.services.filtering import apply_filter

    name = f"case-study-pool{pool.pk}"
    campaign = Campaign.objects.filter(name=name).first()
    if campaign is None:
        options = {"reuse": False} if "reuse" in inspect.signature(create_campaign).parameters else {}
        # no label reuse from earlier campaigns: the counts must be this pool's own
        campaign = create_campaign(name, pool, description="kgpool case study (issue 7)", **options)
    report = filter_preview(pool)
    reused = FILTERED_MARK in campaign.description
    applied = report.labelled
    if not reused:
        applied = apply_filter(campaign, report.rules).applied
        Campaign.objects.filter(pk=campaign.pk).update(description=campaign.description + FILTERED_MARK)
        campaign.refresh_from_db()
    cardinality_only = filter_preview(pool, ["cardinality"]).labelled
    detail = {"campaign": campaign.name, "entries": report.entries, "labelled_n": report.labelled,
              "by_rule": {k: int(v) for k, v in report.by_rule.items()}, "cardinality_rule_alone": cardinality_only,
              "type_source": report.type_source, "applied": applied,
              "left_for_people": report.entries - report.labelled}
    return campaign, detail, reused


def _read_judgments(path: Path, kg: KnowledgeGraph) -> tuple[np.ndarray, np.ndarray]:
    from evaluation.services.labels import JudgmentsFile

    judged = JudgmentsFile(path).judged_triples(kg)
    return judged.triples, judged.positive


def step_coverage(config: CaseStudyConfig, campaign: Any, pool: Pool, filter_detail: dict[str, Any]
                  ) -> tuple[dict[str, Any], bool]:
    """How much of our pool the published judgments cover (set arithmetic), then import them into the campaign."""
    from annotation.models import Item
    from annotation.selectors.filtering import filter_preview
    from annotation.services.imports import import_judgments
    from evaluation.services.labels import answers_sample_question
    from pooling.selectors.pools import pool_entry_array, sample_questions, sample_triples

    sample, kg = pool.sample, pool.sample.kg
    num_e, num_r = kg.num_entities, kg.num_relations
    keys = lambda t: (t[:, 0] * num_r + t[:, 1]) * num_e + t[:, 2]  # noqa: E731
    triples, positive = _read_judgments(config.judgments, kg)
    judged_keys = keys(triples)
    entries = pool_entry_array(pool)
    entry_keys = keys(entries[:, :3])
    sampled_keys = keys(sample_triples(sample))
    covered = np.isin(entry_keys, judged_keys)
    pos_keys = judged_keys[positive]
    covered_y = np.isin(entry_keys, pos_keys)
    # published judged triples (not sampled) that answer one of our questions: the published pool on our sample
    answers_ours = answers_sample_question(triples, sample_questions(sample).questions, num_e, num_r)
    published_pool = answers_ours & ~np.isin(judged_keys, sampled_keys)
    published_pool_in_ours = published_pool & np.isin(judged_keys, entry_keys)
    per_depth = []
    for depth in range(1, pool.depth + 1):
        at = entries[:, 3] == depth
        per_depth.append({"depth": depth, "entries": int(at.sum()), "covered": int((covered & at).sum()),
                          "covered_y": int((covered_y & at).sum())})
    # the trivial filter against the published labels (auto-negatives the people said Y to)
    fired = filter_preview(pool).fired
    from pooling.models import PoolEntry

    fired_rows = PoolEntry.objects.filter(pk__in=list(fired)).values_list("head__index", "relation__index", "tail__index")
    fired_triples = np.array(list(fired_rows), dtype=np.int64).reshape(-1, 3)
    fired_keys = keys(fired_triples)
    detail = {
        "judgments": int(len(triples)), "judgments_yes": int(positive.sum()), "judgments_no": int((~positive).sum()),
        "pool_entries": int(len(entries)), "covered": int(covered.sum()), "covered_yes": int(covered_y.sum()),
        "covered_no": int((covered & ~covered_y).sum()), "not_covered": int((~covered).sum()),
        "covered_fraction": float(covered.mean()) if len(entries) else 0.0,
        "published_pool_on_our_questions": int(published_pool.sum()),
        "published_pool_in_ours": int(published_pool_in_ours.sum()),
        "published_pool_not_in_ours": int((published_pool & ~published_pool_in_ours).sum()),
        "judged_sampled_triples": int(np.isin(judged_keys, sampled_keys).sum()),
        "per_depth": per_depth,
        "filtered_entries": int(len(fired_keys)),
        "filtered_judged": int(np.isin(fired_keys, judged_keys).sum()),
        "filtered_judged_yes": int(np.isin(fired_keys, pos_keys).sum()),
        "uncovered_after_filter": int((~covered & ~np.isin(entry_keys, fired_keys)).sum()),
    }
    reused = IMPORTED_MARK in campaign.description
    if not reused:
        report = import_judgments(campaign, config.judgments)
        type(campaign).objects.filter(pk=campaign.pk).update(description=campaign.description + IMPORTED_MARK)
        campaign.refresh_from_db()
        detail["import"] = {"lines": report.lines, "labelled": report.labelled, "sample": report.sample,
                            "not_in_campaign": len(report.unknown), "kept": report.kept}
    status: dict[str, int] = {}
    for value in campaign.items.values_list("status", flat=True).iterator():
        status[value] = status.get(value, 0) + 1
    detail["campaign_items"] = status
    detail["left_to_judge"] = status.get(Item.Status.PENDING, 0)
    return detail, reused


def evaluation_fingerprint(config: CaseStudyConfig, sample: Sample, pool: Pool, systems: list[System]) -> str:
    from evaluation.services.ranks import system_fingerprint

    stat = config.judgments.stat()
    return _digest({
        "sample": sample.pk, "pool": [pool.pk, pool.finished_at], "labels": [str(config.judgments), stat.st_size,
                                                                                stat.st_mtime_ns],
        "systems": [[s.pk, system_fingerprint(s, sample)] for s in systems],
        "analyses": config.analyses, "figures": config.figures, "version": DEFINITIONS_VERSION,
    })


def step_evaluate(config: CaseStudyConfig, sample: Sample, pool: Pool, systems: list[System],
                  progress: ProgressFn = _no_progress) -> tuple[dict[str, Any], bool]:
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample, result_to_json, write_outputs
    from evaluation.services.labels import JudgmentsFile

    out = Path(config.out) / "evaluation"
    key = evaluation_fingerprint(config, sample, pool, systems)
    stamp = out / "fingerprint.txt"
    if stamp.is_file() and stamp.read_text().strip() == key and (out / "summary.json").is_file():
        return json.loads((out / "summary.json").read_text()), True
    options = EvaluationOptions(device=config.device, analyses=config.analyses)
    result = evaluate_sample(sample, systems=systems, source=JudgmentsFile(config.judgments), pool=pool,
                             options=options, progress=progress)
    write_outputs(result, out, figures=config.figures)
    stamp.write_text(key + "\n")
    return json.loads(json.dumps(result_to_json(result))), False


# ------------------------------------------------------------------------------------ the whole study
@dataclass
class CaseStudyResult:
    steps: list[StepReport]
    data: dict[str, Any]
    out: Path

    def reused(self) -> dict[str, bool]:
        return {step.step: step.reused for step in self.steps}


def run_case_study(config: CaseStudyConfig, *, progress: ProgressFn = _no_progress, log: LogFn = print) -> CaseStudyResult:
    """Run every step (reusing what exists), write ``case_study.json`` and ``report.md`` into ``config.out``."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in (config.judgments, Path(config.data_dir) / "train.txt"):
        if not Path(path).is_file():
            raise CaseStudyError(f"{path} not found")
    steps: list[StepReport] = []
    data: dict[str, Any] = {"config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
                            "published": PUBLISHED}
    total_started = time.perf_counter()

    def run(step: str, title: str, fn: Callable[[], tuple[Any, ...]]) -> Any:
        log(f"[{len(steps) + 1}/7] {title} ...")
        started = time.perf_counter()
        *value, detail, reused = fn()
        seconds = time.perf_counter() - started
        steps.append(StepReport(step, round(seconds, 1), reused, detail))
        data[step] = detail
        log(f"[{len(steps)}/7] {title}: {'reused' if reused else 'done'} in {seconds:.1f} s")
        return value[0] if value else detail

    kg = run("kg", f"import {config.kg_name}", lambda: step_kg(config, progress))
    sample = run("sample", f"seed-{config.seed} sample", lambda: step_sample(config, kg))
    systems = run("systems", f"systems ({config.profile} profile)", lambda: step_systems(config, kg, progress, log))
    pool = run("pool", f"depth-{config.depth} pool", lambda: step_pool(config, sample, systems, progress))
    campaign = run("filter", "trivial filters", lambda: step_filter(config, pool))
    run("coverage", "coverage by the published judgments", lambda: step_coverage(config, campaign, pool, data["filter"]))
    evaluation = run("evaluate", "evaluation (sparse vs completed)",
                     lambda: step_evaluate(config, sample, pool, systems, progress))
    data["evaluate"] = _evaluation_digest(evaluation)
    data["steps"] = [asdict(step) | {"detail": None} for step in steps]
    data["total_seconds"] = round(time.perf_counter() - total_started, 1)
    (out / "case_study.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    (out / "report.md").write_text(format_report(data), encoding="utf-8")
    return CaseStudyResult(steps, data, out)


def _evaluation_digest(summary: dict[str, Any]) -> dict[str, Any]:
    """The parts of the evaluation summary the report shows (the full files are in ``out/evaluation``)."""
    keep = ("systems", "seconds", "label_sets", "tables", "kendall", "depth_curve", "discriminative_auc",
            "probe_alpha", "probe_beta")
    digest = {key: summary.get(key) for key in keep}
    digest["label_sets"] = {k: v for k, v in (summary.get("label_sets") or {}).items() if not k.startswith("completed@")}
    digest["tables"] = {k: v for k, v in (summary.get("tables") or {}).items() if k in ("sparse", "completed")}
    digest["breakdown_micro_mrr"] = [row for row in summary.get("breakdown") or [] if row.get("metric") == "micro_MRR"]
    return digest


# ------------------------------------------------------------------------------------ report
def _f(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_report(data: dict[str, Any]) -> str:
    lines = ["# Case study results (generated by `case_study`)", ""]
    lines += ["## Steps", "", "| step | seconds | reused |", "|---|---|---|"]
    for step in data.get("steps", []):
        lines.append(f"| {step['step']} | {step['seconds']} | {'yes' if step['reused'] else 'no'} |")
    lines.append(f"\nTotal: {data.get('total_seconds')} s\n")
    s = data["sample"]
    lines += ["## Sample", "", f"- {s.get('cut_down', s['drawn'])}: {s['size']} triples, {s['questions']} questions, "
              f"KL {s['kl_divergence']:.4f}; seed-42 draw equals the published sample: {s['equals_published']}", ""]
    lines += ["## Systems", "", "| system | dim | epochs | valid MRR | test MRR | published test MRR | train s |",
              "|---|---|---|---|---|---|---|"]
    for row in data["systems"]["systems"]:
        lines.append(f"| {row['system']} | {row['dim']} | {row['epochs']} | {_f(row['valid_mrr'])} | {_f(row['test_mrr'])} "
                     f"| {_f(row['published_test_mrr'])} ({row['published_source']}) | {_f(row['train_seconds'], 0)} |")
    p = data["pool"]
    lines += ["", "## Pool", "", f"- {p['entries']} entries over {p['questions_with_entries']} of "
              f"{p['sample_questions']} questions at depth {p['depth']} (published: 21,469 over 1,745); "
              f"known triples in the pool: {p['known_triples_in_pool']}",
              f"- entries per depth 1..{p['depth']}: {p['entries_per_depth']}",
              "- per system (retrieved / only this system): " + ", ".join(
                  f"{name} {v['entries']}/{v['only_this_system']}" for name, v in p["per_system"].items())]
    f = data["filter"]
    lines += ["", "## Trivial filters", "", f"- {f['labelled_n']} of {f['entries']} entries labelled N "
              f"(by rule: {f['by_rule']}; cardinality alone {f['cardinality_rule_alone']}; types from {f['type_source']}); "
              f"{f['left_for_people']} left for people (published: 8,899 removed of 21,469)"]
    c = data["coverage"]
    lines += ["", "## Coverage by the published judgments", "",
              f"- {c['covered']} of {c['pool_entries']} pool entries are judged ({100 * c['covered_fraction']:.1f}%): "
              f"{c['covered_yes']} Y, {c['covered_no']} N; {c['not_covered']} not judged "
              f"({c['uncovered_after_filter']} of them not removed by the trivial filters)",
              f"- published pool triples on our questions: {c['published_pool_on_our_questions']}, of which "
              f"{c['published_pool_in_ours']} are in our pool and {c['published_pool_not_in_ours']} are not",
              f"- trivial filter vs published labels: {c['filtered_judged']} of {c['filtered_entries']} filtered entries "
              f"were judged, {c['filtered_judged_yes']} of them Y",
              f"- campaign after importing the published labels: {c['campaign_items']}; left to judge: {c['left_to_judge']}",
              "", "| depth | entries | judged | judged Y |", "|---|---|---|---|"]
    for row in c["per_depth"]:
        lines.append(f"| {row['depth']} | {row['entries']} | {row['covered']} | {row['covered_y']} |")
    e = data["evaluate"]
    metrics = ["micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "PROBE"]
    for set_name in ("sparse", "completed"):
        rows = (e.get("tables") or {}).get(set_name) or []
        stats = (e.get("label_sets") or {}).get(set_name, {})
        lines += ["", f"## Metrics on the {set_name} labels ({stats.get('positives')} positive / "
                  f"{stats.get('negatives')} negative triples)", "",
                  "| system | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
        for row in rows:
            lines.append(f"| {row['system']} | " + " | ".join(_f(row.get(m)) for m in metrics) + " |")
    lines += ["", "## Kendall's tau-b, sparse vs completed", "", "| metric | tau |", "|---|---|"]
    for row in e.get("kendall") or []:
        lines.append(f"| {row['metric']} | {_f(row['tau'])} |")
    curve = e.get("depth_curve") or []
    if curve:
        lines += ["", "## tau-b vs pooling depth (sparse vs completed@d)", "",
                  "| depth | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
        for row in curve:
            lines.append(f"| {row['depth']} | " + " | ".join(_f(row.get(m)) for m in metrics) + " |")
    auc = e.get("discriminative_auc") or []
    if auc:
        lines += ["", "## Discriminative power (area under the sorted p-value curve; smaller = more discriminative)",
                  "", "| label set | metric | AUC | significant pairs |", "|---|---|---|---|"]
        for row in auc:
            lines.append(f"| {row['label_set']} | {row['metric']} | {_f(row['auc'], 4)} | {_f(row['significant_fraction'], 2)} |")
    breakdown = e.get("breakdown_micro_mrr") or []
    if breakdown:
        systems = e.get("systems") or []
        groups = sorted({(r["label_set"], r["group"]) for r in breakdown})
        value = {(r["label_set"], r["group"], r["system"]): r["value"] for r in breakdown}
        count = {(r["label_set"], r["group"]): r["count"] for r in breakdown}
        lines += ["", "## micro MRR per relation category x side", "",
                  "| labels | group | n | " + " | ".join(systems) + " |", "|---" * (len(systems) + 3) + "|"]
        for set_name, group in groups:
            lines.append(f"| {set_name} | {group} | {count[(set_name, group)]} | "
                         + " | ".join(_f(value.get((set_name, group, s))) for s in systems) + " |")
    return "\n".join(lines) + "\n"
