"""What every stage of an evaluation shares: the label sets, the evaluated questions and the (question, entity)
pairs to rank, and the judged ranks of each system (``evaluation.services.ranks``).

The evaluated questions are the sample's questions followed by the completion questions of the label sets' positive
triples (the other side of each positive pool triple, ``pooling.selectors.questions``), so that the completed micro
metrics rank both sides of every labelled triple (SPEC 5.2) and every question of the campaign's questions export is
evaluated. Each label set then uses the questions with at least one of its positives (``metrics.QuestionLabels``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluation.services.errors import EvaluationError
from evaluation.services.labels import LabelSet, LabelSource, default_pool, label_sets
from evaluation.services.ranks import JudgedRanks, can_evaluate, judged_ranks, macro_filter, union_universe
from pooling.engine.questions import Ragged, known_answers
from pooling.models import Pool, Sample, System
from pooling.selectors.kg import kg_triples
from pooling.selectors.questions import AskedQuestions, label_questions

ProgressFn = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def evaluable_systems(sample: Sample, names: list[str] | None = None) -> list[System]:
    """The systems to evaluate: the named ones (must be evaluable), else every evaluable one of the KG."""
    if names:
        from pooling.selectors.pools import systems_by_names

        systems = systems_by_names(sample.kg, names)
        bad = [s.name for s in systems if not can_evaluate(s, sample)]
        if bad:
            raise EvaluationError(f"cannot evaluate {', '.join(bad)} on {sample.name}: not ready, or an imported "
                                  f"system without a ranking on this sample, or imported before kgpool kept imported "
                                  f"scores (import it again)")
        return systems
    return [s for s in System.objects.filter(kg=sample.kg).order_by("name") if can_evaluate(s, sample)]


@dataclass
class EvaluationInputs:
    """The label sets, the evaluated questions (``asked``) and the universe of (question, entity) pairs to rank."""

    sample: Sample
    pool: Pool | None
    sets: dict[str, LabelSet]
    arrays: dict[str, np.ndarray]
    asked: AskedQuestions
    tv_filter: Ragged
    test_answers: Ragged
    universe: Ragged

    def digest(self) -> str:
        """Fingerprint of the labels and pool (to skip a re-run whose inputs did not change)."""
        import hashlib

        digest = hashlib.sha1()
        for name in sorted(self.sets):
            digest.update(f"{name}:{self.sets[name].digest()};".encode())
        digest.update(f"pool:{self.pool.pk if self.pool is not None else ''}".encode())
        return digest.hexdigest()[:16]


def evaluation_inputs(sample: Sample, source: LabelSource | None = None, pool: Pool | None = None,
                      depths: list[int] | None = None) -> EvaluationInputs:
    """Label sets of ``sample`` from ``source``, the evaluated questions and the universe to rank. ``pool``
    defaults to the source's pool (a campaign's) or else the sample's only finished pool."""
    if source is not None and pool is None:
        pool = getattr(source, "pool", None) or default_pool(sample)
    arrays = kg_triples(sample.kg)
    sets = label_sets(sample, source, pool, depths)
    positives = np.concatenate([s.triples[s.positive] for s in sets.values()])
    asked = label_questions(sample, positives)
    tv_filter = macro_filter(arrays, asked.questions)
    test_answers = known_answers(asked.questions, arrays["test"])
    biggest = sets.get("completed", sets["sparse"])
    universe = union_universe(asked.questions, arrays["test"], biggest.triples, sets["sparse"].triples)
    return EvaluationInputs(sample, pool, sets, arrays, asked, tv_filter, test_answers, universe)


def score_systems(inputs: EvaluationInputs, systems: list[System], *, device: str | None = None,
                  progress: ProgressFn = _no_progress) -> tuple[dict[str, JudgedRanks], dict[str, dict[str, int]]]:
    """Judged ranks of every system on the universe (rank cache: only missing pairs are scored)."""
    rank_stats: dict[str, dict[str, int]] = {}
    ranks: dict[str, JudgedRanks] = {}
    for index, system in enumerate(systems):
        progress(f"ranks {system.name}", index, len(systems))
        stats: dict[str, int] = {}
        ranks[system.name] = judged_ranks(system, inputs.sample, inputs.asked.questions, inputs.universe,
                                          inputs.tv_filter, device=device, progress=None, stats=stats)
        rank_stats[system.name] = stats
    progress("ranks", len(systems), len(systems))
    return ranks, rank_stats

