"""Writes: rankings of systems on a sample's questions (computed here or imported from TREC run files).

Rows of every ranking follow ``Question.position``; candidates exclude all known triples (train + valid +
test); targets are the sample's answers of each question, so a ranking also yields the sparse filtered ranks.
torch is imported lazily (the ranking engine needs it).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import transaction
from django.utils.text import slugify

from pooling.engine.questions import Ragged
from pooling.models import Ranking, Sample, System
from pooling.selectors.pools import SampleQuestions, entity_keys, question_filter, ranking_result, sample_questions
from pooling.storage import save_arrays, storage_path

if TYPE_CHECKING:  # pragma: no cover
    from pooling.engine.ranking import RankingResult

FILTER_ALL = "train+valid+test"


class RunImportError(Exception):
    """A run file was refused; the message names the file and line. Nothing was written."""


# ------------------------------------------------------------------------------------ RankingResult helpers
def slice_result(result: "RankingResult", start: int, stop: int, k: int | None = None) -> "RankingResult":
    """Rows ``start:stop`` of a result, top-k cut to ``k`` columns (when given and smaller)."""
    from pooling.engine.ranking import RankingResult

    offsets = result.targets.offsets
    first, last = int(offsets[start]), int(offsets[stop])
    columns = result.k if k is None else min(k, result.k)
    return RankingResult(
        topk_entities=result.topk_entities[start:stop, :columns], topk_scores=result.topk_scores[start:stop, :columns],
        targets=Ragged(offsets[start : stop + 1] - first, result.targets.values[first:last]),
        greater=result.greater[first:last], ties=result.ties[first:last], num_candidates=result.num_candidates[first:last],
    )


def concat_results(parts: list["RankingResult"]) -> "RankingResult":
    """Results of consecutive row ranges, stacked (top-k widths padded to the widest with -1 / NaN)."""
    from pooling.engine.ranking import RankingResult

    k = max(part.k for part in parts)
    entities, scores, offsets, values = [], [], [np.zeros(1, dtype=np.int64)], []
    shift = 0
    for part in parts:
        pad = k - part.k
        entities.append(np.pad(part.topk_entities, ((0, 0), (0, pad)), constant_values=-1))
        scores.append(np.pad(part.topk_scores, ((0, 0), (0, pad)), constant_values=np.nan))
        offsets.append(part.targets.offsets[1:] + shift)
        values.append(part.targets.values)
        shift += part.targets.nnz
    return RankingResult(
        topk_entities=np.concatenate(entities), topk_scores=np.concatenate(scores),
        targets=Ragged(np.concatenate(offsets), np.concatenate(values)),
        greater=np.concatenate([part.greater for part in parts]), ties=np.concatenate([part.ties for part in parts]),
        num_candidates=np.concatenate([part.num_candidates for part in parts]),
    )


def result_mrr(result: "RankingResult") -> float | None:
    ranks = result.ranks("realistic")
    return float(np.mean(1.0 / ranks)) if ranks.size else None


# ------------------------------------------------------------------------------------ ranking
def stored_ranking(system: System, sample: Sample, k: int) -> Ranking | None:
    """The system's ranking on the sample when it can serve a top-k (imported rankings serve any k)."""
    ranking = Ranking.objects.filter(system=system, sample=sample).first()
    if ranking is None:
        return None
    if system.origin == System.Origin.IMPORTED or ranking.k >= k:
        return ranking
    return None


def rank_rows(
    system: System,
    sample: Sample,
    sq: SampleQuestions,
    start: int,
    stop: int,
    *,
    k: int,
    filter_sets: Ragged | None = None,
    device: str | None = None,
    model: Any = None,
) -> "RankingResult":
    """The system's filtered top-k and target ranks on questions ``start:stop`` of the sample.

    A stored ranking with enough depth is sliced; otherwise the trained model scores the questions.
    """
    ranking = stored_ranking(system, sample, k)
    if ranking is not None:
        return slice_result(ranking_result(ranking), start, stop, k)
    if system.origin != System.Origin.TRAINED:
        raise ValueError(f"imported system {system.name!r} has no ranking on sample {sample.name!r}")
    from pooling.engine.ranking import rank
    from pooling.kge import model_score_fn, resolve_device
    from pooling.services.systems import load_system_model

    resolved = str(resolve_device(device))
    if model is None:
        model = load_system_model(system, device=resolved)
    rows = np.arange(start, stop, dtype=np.int64)
    questions = sq.questions.take(rows)
    chunk_filter = filter_sets.take(rows) if filter_sets is not None else question_filter(sample.kg, questions)
    return rank(
        model_score_fn(model), questions, num_entities=sample.kg.num_entities,
        filter=chunk_filter, targets=sq.answers.take(rows), k=k, device=resolved,
    )


def save_ranking(system: System, sample: Sample, result: "RankingResult", *, filter_text: str = FILTER_ALL) -> Ranking:
    """Store ``result`` as the system's ranking on the sample (replacing an earlier one), file written atomically."""
    relative = f"rankings/{sample.pk}/{system.pk}-{system.name}.npz"
    save_arrays(relative, **result.to_arrays())
    ranking, _created = Ranking.objects.update_or_create(
        system=system, sample=sample,
        defaults={"k": result.k, "filter": filter_text, "ranking_file": relative, "mrr": result_mrr(result)},
    )
    return ranking


def rank_system(
    system: System, sample: Sample, *, k: int = 100, device: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Ranking:
    """Rank all the sample's questions with a trained system (filtered top-k + sparse ranks) and store it."""
    from pooling.engine.ranking import rank
    from pooling.kge import model_score_fn, resolve_device
    from pooling.services.systems import load_system_model

    if system.kg_id != sample.kg_id:
        raise ValueError(f"system {system} and sample {sample} belong to different knowledge graphs")
    sq = sample_questions(sample)
    resolved = str(resolve_device(device))
    model = load_system_model(system, device=resolved)
    result = rank(
        model_score_fn(model), sq.questions, num_entities=sample.kg.num_entities,
        filter=question_filter(sample.kg, sq.questions), targets=sq.answers, k=k, device=resolved,
        progress=(lambda done, total: progress(f"rank {system.name}", done, total)) if progress else None,
    )
    return save_ranking(system, sample, result)


# ------------------------------------------------------------------------------------ TREC run import
RUN_CHUNK = 256


def import_run(sample: Sample, path: Path | str, *, name: str, description: str = "") -> System:
    """Import a TREC run (``qid Q0 entity rank score tag``) on the sample's questions as a system + ranking.

    qids are the sample's question ids (``head<N>`` / ``tail<N>``), entities the KG's entity keys. As in
    trec_eval the rank column is ignored and entities are ordered by score. Known triples (train + valid +
    test) are removed from the candidates exactly as for trained systems; a target answer missing from the run
    ranks below every retrieved candidate, tied with all other unretrieved ones. Validation happens before any
    write; the system row and ranking file are written together (the file is removed again if the write fails).
    """
    from evaluation.core.trec import TrecFormatError, read_run
    from pooling.engine.ranking import rank, score_fn_from_matrix

    path = Path(path)
    kg = sample.kg
    name = name.strip()
    if not name or slugify(name) != name:
        raise RunImportError(f"system name {name!r} must be a slug (letters, digits, - and _)")
    if System.objects.filter(kg=kg, name=name).exists():
        raise RunImportError(f"a system named {name!r} already exists in {kg.name}")
    try:
        run = read_run(path)
    except TrecFormatError as exc:
        raise RunImportError(str(exc)) from None
    if len(run) == 0:
        raise RunImportError(f"{path}: the run is empty")
    sq = sample_questions(sample)
    row_of = {qid: row for row, qid in enumerate(sq.qids)}
    index_of = {key: index for index, key in enumerate(entity_keys(kg))}
    query_rows = np.array([row_of.get(str(q), -1) for q in run.query_names], dtype=np.int64)
    doc_entities = np.array([index_of.get(str(d), -1) for d in run.doc_names], dtype=np.int64)
    if (query_rows < 0).any():
        bad = str(run.query_names[int(np.flatnonzero(query_rows < 0)[0])])
        raise RunImportError(f"{path}:{_line_of(path, 0, bad)}: query {bad!r} is not a question of sample "
                             f"{sample.name} (its qids are head0.., tail0..)")
    if (doc_entities < 0).any():
        bad = str(run.doc_names[int(np.flatnonzero(doc_entities < 0)[0])])
        raise RunImportError(f"{path}:{_line_of(path, 2, bad)}: entity {bad!r} is not an entity of {kg.name}")
    rows, entities, scores = query_rows[run.query], doc_entities[run.doc], run.score

    filter_sets = question_filter(kg, sq.questions)
    num_entities, num_questions = kg.num_entities, len(sq)
    order = np.argsort(rows, kind="stable")
    rows, entities, scores = rows[order], entities[order], scores[order]
    bounds = np.searchsorted(rows, np.arange(0, num_questions + RUN_CHUNK, RUN_CHUNK).clip(max=num_questions))
    # k: the most unfiltered candidates a question has in the run
    filtered = _in_sets(filter_sets, rows, entities, num_entities)
    per_question = np.bincount(rows[~filtered], minlength=num_questions)
    k = max(1, int(per_question.max(initial=0)))
    parts = []
    for chunk, start in enumerate(range(0, num_questions, RUN_CHUNK)):
        stop = min(start + RUN_CHUNK, num_questions)
        lo, hi = bounds[chunk], bounds[chunk + 1]
        matrix = np.full((stop - start, num_entities), -np.inf, dtype=np.float64)
        matrix[rows[lo:hi] - start, entities[lo:hi]] = scores[lo:hi]
        chunk_rows = np.arange(start, stop, dtype=np.int64)
        part = rank(score_fn_from_matrix(matrix), sq.questions.take(chunk_rows), num_entities=num_entities,
                    filter=filter_sets.take(chunk_rows), targets=sq.answers.take(chunk_rows), k=k)
        unretrieved = ~(part.topk_scores > -np.inf)  # -inf (not in the run) and NaN padding
        part.topk_entities[unretrieved] = -1
        part.topk_scores[unretrieved] = np.nan
        parts.append(part)
    result = concat_results(parts)

    relative = None
    try:
        with transaction.atomic():
            system = System.objects.create(
                kg=kg, name=name, architecture="", origin=System.Origin.IMPORTED, status=System.Status.READY,
                config={"run_file": str(path.resolve()), "tag": run.tag, "sample": sample.name,
                        "description": description},
            )
            relative = f"rankings/{sample.pk}/{system.pk}-{system.name}.npz"
            save_arrays(relative, **result.to_arrays())
            Ranking.objects.create(system=system, sample=sample, k=result.k, filter=FILTER_ALL,
                                   ranking_file=relative, mrr=result_mrr(result))
    except BaseException:
        if relative is not None:
            storage_path(relative).unlink(missing_ok=True)
        raise
    return system


def _in_sets(sets: Ragged, rows: np.ndarray, values: np.ndarray, num_entities: int) -> np.ndarray:
    keys = sets.row_ids() * num_entities + sets.values  # sorted: rows ascending, values sorted within
    wanted = rows * num_entities + values
    if keys.size == 0:
        return np.zeros(wanted.size, dtype=bool)
    position = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    return keys[position] == wanted


def _line_of(path: Path, column: int, value: str) -> int | str:
    """1-based number of the first line whose ``column`` equals ``value`` (for error messages)."""
    with open(path, encoding="utf-8", errors="replace") as stream:
        for number, line in enumerate(stream, start=1):
            fields = line.split()
            if len(fields) > column and fields[column] == value:
                return number
    return "?"
