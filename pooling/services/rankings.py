"""Writes: rankings of systems on a sample's questions (computed here or imported from TREC run files or
score matrices).

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
    name = _new_system_name(kg, name, RunImportError)
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
        parts.append(_drop_unscored(part))  # -inf: not in the run
    result = concat_results(parts)
    return _store_imported(sample, name, result,
                           {"run_file": str(path.resolve()), "tag": run.tag, "sample": sample.name,
                            "description": description})


# ------------------------------------------------------------------------------------ score matrix import
class ScoresImportError(RunImportError):
    """A score matrix (or its entity / question index) was refused; the message names the file. Nothing was written."""


def import_scores(
    sample: Sample,
    scores_path: Path | str,
    *,
    name: str,
    entity_index_path: Path | str | None = None,
    questions_path: Path | str | None = None,
    description: str = "",
    k: int | None = None,
) -> System:
    """Import a per-question score matrix of a system trained elsewhere as a system + ranking on the sample.

    ``scores_path`` is a ``.npy`` float array (Q, E) or an ``.npz`` with ``scores`` (Q, E) and optionally
    ``entities`` (E,) and ``qids`` (Q,) strings (never pickled objects). Columns are the KG's entity indices
    0..E-1 unless an entity index (``entity_index_path``, one entity key per line, or the npz ``entities``)
    names the entity of each column; rows follow ``Question.position`` unless qids (``questions_path``, one
    qid per line in row order, or the npz ``qids``) name the question of each row. Every entity and every
    question of the sample must be scored exactly once. NaN scores count as -inf (rank last, never pooled).
    The matrix is ranked by the engine exactly like a trained system (known triples filtered, the sample's
    answers as targets) to depth ``k`` (default: every candidate). Validation happens before any write.
    """
    from pooling.engine.ranking import rank, score_fn_from_matrix

    error = ScoresImportError
    path = Path(scores_path)
    kg = sample.kg
    name = _new_system_name(kg, name, error)
    if k is not None and k < 1:
        raise error(f"k must be >= 1, got {k}")
    matrix, npz_entities, npz_qids = _read_score_file(path)
    num_rows, num_columns = matrix.shape
    sq = sample_questions(sample)
    num_entities, num_questions = kg.num_entities, len(sq)
    if num_questions == 0:
        raise error(f"sample {sample.name} has no questions")

    # columns -> entity indices
    if entity_index_path is not None and npz_entities is not None:
        raise error(f"{path} holds an `entities` array and an entity index file was also given: use one")
    if entity_index_path is not None:
        columns = _text_index(Path(entity_index_path), {key: i for i, key in enumerate(entity_keys(kg))},
                              "entity", f"an entity of {kg.name}")
        column_source = f"{entity_index_path}"
    elif npz_entities is not None:
        columns = _array_index(path, "entities", npz_entities, {key: i for i, key in enumerate(entity_keys(kg))},
                               f"an entity of {kg.name}")
        column_source = f"{path} (entities)"
    else:
        columns, column_source = None, None
    if columns is None:
        if num_columns != num_entities:
            raise error(f"{path}: the matrix has {num_columns} columns but {kg.name} has {num_entities} entities "
                        "(without an entity index, columns are the entity indices 0..E-1)")
    else:
        if columns.size != num_columns:
            raise error(f"{column_source} names {columns.size} entities but the matrix in {path} has "
                        f"{num_columns} columns")
        if columns.size != num_entities:
            missing = np.setdiff1d(np.arange(num_entities), columns)
            keys = entity_keys(kg)
            raise error(f"{column_source} misses {missing.size} of the {num_entities} entities of {kg.name} "
                        f"(e.g. {', '.join(repr(keys[i]) for i in missing[:3])}); every entity needs a score")

    # rows -> sample rows
    if questions_path is not None and npz_qids is not None:
        raise error(f"{path} holds a `qids` array and a questions file was also given: use one")
    row_of = {qid: row for row, qid in enumerate(sq.qids)}
    what = f"a question of sample {sample.name} (its qids are head0.., tail0..)"
    if questions_path is not None:
        rows = _text_index(Path(questions_path), row_of, "qid", what, field=lambda line: line.split("\t")[0].strip())
        row_source = f"{questions_path}"
    elif npz_qids is not None:
        rows = _array_index(path, "qids", npz_qids, row_of, what)
        row_source = f"{path} (qids)"
    else:
        rows, row_source = None, None
    if rows is None:
        if num_rows != num_questions:
            raise error(f"{path}: the matrix has {num_rows} rows but sample {sample.name} has {num_questions} "
                        "questions (without qids, rows follow the questions' positions)")
    else:
        if rows.size != num_rows:
            raise error(f"{row_source} names {rows.size} questions but the matrix in {path} has {num_rows} rows")
        if rows.size != num_questions:
            missing = np.setdiff1d(np.arange(num_questions), rows)
            raise error(f"{row_source} misses {missing.size} of the {num_questions} questions of sample "
                        f"{sample.name} (e.g. {', '.join(sq.qids[i] for i in missing[:3])}); every question "
                        "needs a row")

    # align: row i = question i of the sample, column e = entity e
    if rows is not None or columns is not None:
        aligned = np.empty_like(matrix)
        row_index = rows if rows is not None else np.arange(num_rows)
        column_index = columns if columns is not None else np.arange(num_columns)
        aligned[row_index[:, None], column_index[None, :]] = matrix
        matrix = aligned
    filter_sets = question_filter(kg, sq.questions)
    if k is None:
        k = max(1, num_entities - int(filter_sets.lengths.min()))
    result = _drop_unscored(rank(score_fn_from_matrix(matrix), sq.questions, num_entities=num_entities,
                                 filter=filter_sets, targets=sq.answers, k=k))
    config = {"scores_file": str(path.resolve()), "sample": sample.name, "description": description}
    if entity_index_path is not None:
        config["entity_index_file"] = str(Path(entity_index_path).resolve())
    if questions_path is not None:
        config["questions_file"] = str(Path(questions_path).resolve())
    return _store_imported(sample, name, result, config)


def _read_score_file(path: Path) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(scores (Q, E) float, entities or None, qids or None) of a .npy / .npz file; pickled objects refused."""
    error = ScoresImportError
    if not path.is_file():
        raise error(f"{path}: no such file")
    entities = qids = None
    try:
        with open(path, "rb") as stream:
            magic = stream.read(6)
            stream.seek(0)
            if magic != b"\x93NUMPY" and not magic.startswith(b"PK\x03\x04"):
                raise error(f"{path}: cannot read the score file: not a .npy or .npz file (pickles are refused)")
            loaded = np.load(stream, allow_pickle=False)
            if isinstance(loaded, np.lib.npyio.NpzFile):
                with loaded:
                    if "scores" not in loaded.files:
                        raise error(f"{path}: the npz file has no `scores` array (it has: "
                                    f"{', '.join(loaded.files) or 'nothing'})")
                    scores = loaded["scores"]
                    entities = loaded["entities"] if "entities" in loaded.files else None
                    qids = loaded["qids"] if "qids" in loaded.files else None
            elif isinstance(loaded, np.ndarray):
                scores = loaded
            else:
                raise error(f"{path}: not a .npy or .npz file")
    except ScoresImportError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise error(f"{path}: holds pickled object arrays, which are refused; save plain numeric / string "
                        "arrays") from None
        raise error(f"{path}: cannot read the score file ({exc})") from None
    except Exception as exc:  # corrupt zip, truncated array, unreadable file...
        raise error(f"{path}: cannot read the score file ({type(exc).__name__}: {exc})") from None
    if scores.ndim != 2:
        raise error(f"{path}: scores must be a 2-d array (questions, entities), got shape {scores.shape}")
    if scores.dtype.kind == "f":
        pass
    elif scores.dtype.kind in "iu":
        scores = scores.astype(np.float64)
    else:
        raise error(f"{path}: scores must be numbers (float), got dtype {scores.dtype}")
    if scores.shape[0] == 0 or scores.shape[1] == 0:
        raise error(f"{path}: the score matrix is empty (shape {scores.shape})")
    return scores, entities, qids


def _array_index(path: Path, array: str, values: np.ndarray, index_of: dict[str, int], what: str) -> np.ndarray:
    """The indices named by an npz string array (one per row / column), refusing unknown or repeated names."""
    error = ScoresImportError
    if values.ndim != 1:
        raise error(f"{path}: `{array}` must be a 1-d array of strings, got shape {values.shape}")
    if values.dtype.kind not in "US":
        raise error(f"{path}: `{array}` must hold strings, got dtype {values.dtype}")
    names = [value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value) for value in values.tolist()]
    result = np.empty(len(names), dtype=np.int64)
    first: dict[str, int] = {}
    for position, key in enumerate(names):
        if key not in index_of:
            raise error(f"{path}: {array}[{position}] {key!r} is not {what}")
        if key in first:
            raise error(f"{path}: {array}[{position}] {key!r} repeats {array}[{first[key]}]")
        first[key] = position
        result[position] = index_of[key]
    return result


def _text_index(path: Path, index_of: dict[str, int], noun: str, what: str,
                field: Callable[[str], str] = str.strip) -> np.ndarray:
    """The indices named by a text file with one name per line, refusing unknown, repeated or empty lines."""
    error = ScoresImportError
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read the file ({exc})") from None
    result = []
    first: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        key = field(line)
        if not key:
            raise error(f"{path}:{number}: empty line (expected one {noun} per line)")
        if key not in index_of:
            raise error(f"{path}:{number}: {noun} {key!r} is not {what}")
        if key in first:
            raise error(f"{path}:{number}: {noun} {key!r} repeats line {first[key]}")
        first[key] = number
        result.append(index_of[key])
    return np.array(result, dtype=np.int64)


# ------------------------------------------------------------------------------------ shared by the importers
def _new_system_name(kg: Any, name: str, error: type[RunImportError]) -> str:
    """The stripped name of a new imported system, refused when not a slug or already taken in the KG."""
    name = name.strip()
    if not name or slugify(name) != name:
        raise error(f"system name {name!r} must be a slug (letters, digits, - and _)")
    if System.objects.filter(kg=kg, name=name).exists():
        raise error(f"a system named {name!r} already exists in {kg.name}")
    return name


def _drop_unscored(part: "RankingResult") -> "RankingResult":
    """Top-k slots scored -inf (not retrieved / NaN) become padding (-1 / NaN), so they are never pooled."""
    unretrieved = ~(part.topk_scores > -np.inf)  # -inf and NaN padding
    part.topk_entities[unretrieved] = -1
    part.topk_scores[unretrieved] = np.nan
    return part


def _store_imported(sample: Sample, name: str, result: "RankingResult", config: dict[str, Any]) -> System:
    """Write an imported system and its ranking on the sample together: one transaction, the file written
    atomically last and removed again if the transaction fails."""
    relative = None
    try:
        with transaction.atomic():
            system = System.objects.create(
                kg=sample.kg, name=name, architecture="", origin=System.Origin.IMPORTED, status=System.Status.READY,
                config=config,
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
