"""Writes: rankings of systems on a sample's questions (computed here or imported from TREC run files or
score matrices).

Rows of every ranking follow ``Question.position``; candidates exclude all known triples (train + valid +
test); targets are the sample's answers of each question, so a ranking also yields the sparse filtered ranks.
torch is imported lazily (the ranking engine needs it).
"""
from __future__ import annotations

import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction

from pooling.engine import userfiles
from pooling.engine.npzfiles import ArrayFile, StoredArray, load_checked
from pooling.engine.questions import Ragged
from pooling.engine.userfiles import UserFileError, shown
from pooling.models import Entity, Ranking, Sample, System
from pooling.selectors.pools import SampleQuestions, entity_keys, question_filter, ranking_result, sample_questions
from pooling.services.names import checked_name
from pooling.storage import remove_file, save_arrays, storage_path

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
def rank_memory_budget() -> int:
    """Bytes one batch's score tensor may take in the ranking engine (``RANK_MEMORY_MB``); above it the engine
    scores entity blocks (``pooling.engine.ranking``)."""
    return int(getattr(settings, "KGPOOL_RANK_MEMORY_BYTES", 512 << 20))


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
    from pooling.services.systems import cached_system_model

    resolved = str(resolve_device(device))
    if model is None:
        model = cached_system_model(system, device=resolved)
    rows = np.arange(start, stop, dtype=np.int64)
    questions = sq.questions.take(rows)
    chunk_filter = filter_sets.take(rows) if filter_sets is not None else question_filter(sample.kg, questions)
    return rank(
        model_score_fn(model), questions, num_entities=sample.kg.num_entities,
        filter=chunk_filter, targets=sq.answers.take(rows), k=k, device=resolved, memory_budget=rank_memory_budget(),
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
        memory_budget=rank_memory_budget(),
        progress=(lambda done, total: progress(f"rank {system.name}", done, total)) if progress else None,
    )
    return save_ranking(system, sample, result)


# ------------------------------------------------------------------------------------ TREC run import
def import_run(sample: Sample, path: Path | str, *, name: str, description: str = "",
               questions_path: Path | str | None = None) -> System:
    """Import a TREC run (``qid Q0 entity rank score tag``) on the sample's questions as a system + ranking.

    qids are the sample's question ids (``head<N>`` / ``tail<N>``), entities the KG's entity keys. As in
    trec_eval the rank column is ignored and entities are ordered by score. Known triples (train + valid +
    test) are removed from the candidates exactly as for trained systems; a target answer missing from the run
    ranks below every retrieved candidate, tied with all other unretrieved ones. Scores: NaN and +inf are
    refused (with the line); a line scored -inf means "not retrieved", exactly like a missing line, and is
    counted in the system's ``config["unretrieved_lines"]`` (with the first such line) so the command reports
    it. ``questions_path`` (the campaign's ``questions`` export, ``qid<TAB>entity<TAB>relation``) names questions
    beyond the sample that the run also answers (the other side of positive pool triples, ranked by the completed
    micro metrics). The run's entries are kept as given (``Ranking.scores_file``, see
    ``pooling.services.imported_scores``): evaluation ranks from them. Validation happens before any write; the
    system row, ranking and scores files are written together (the files are removed again if the write fails).
    """
    from pooling.services.imported_scores import read_questions_file, run_arrays, sample_only

    from pooling.engine.ranking import SparseScores, rank

    path = Path(path)
    kg = sample.kg
    name = _new_system_name(kg, name, RunImportError)
    run = _read_run_file(path)
    if len(run) == 0:
        raise RunImportError(f"{path}: the run is empty")
    refused = np.isposinf(run.score) | np.isnan(run.score)  # the TREC reader takes both, as trec_eval does
    if refused.any():
        first = int(np.flatnonzero(refused)[0])
        qid, doc = str(run.query_names[run.query[first]]), str(run.doc_names[run.doc[first]])
        value = "NaN" if np.isnan(run.score[first]) else "+inf"
        raise RunImportError(f"{path}:{_line_of_pair(path, qid, doc)}: score {value} (of {shown(doc)} for {qid}) is "
                             "refused: scores must be finite (-inf marks an entity as not retrieved)")
    unretrieved = np.isneginf(run.score)
    unretrieved_report: dict[str, Any] = {}
    if unretrieved.any():
        first = int(np.flatnonzero(unretrieved)[0])
        qid, doc = str(run.query_names[run.query[first]]), str(run.doc_names[run.doc[first]])
        unretrieved_report = {"unretrieved_lines": int(unretrieved.sum()),
                              "first_unretrieved_line": _line_of_pair(path, qid, doc)}
        if unretrieved.all():
            raise RunImportError(f"{path}: every line of the run scores -inf (not retrieved): nothing to import")
    sq = sample_questions(sample)
    asked = (read_questions_file(Path(questions_path), sample, sq, RunImportError)[0] if questions_path is not None
             else sample_only(sq))
    row_of = asked.row_of()
    index_of = {key: index for index, key in enumerate(entity_keys(kg))}
    query_rows = np.array([row_of.get(str(q), -1) for q in run.query_names], dtype=np.int64)
    doc_entities = np.array([index_of.get(str(d), -1) for d in run.doc_names], dtype=np.int64)
    if (query_rows < 0).any():
        bad = str(run.query_names[int(np.flatnonzero(query_rows < 0)[0])])
        raise RunImportError(f"{path}:{_line_of(path, 0, bad)}: query {shown(bad)} is not a question of sample "
                             f"{sample.name} (its qids are head0.., tail0..; questions beyond the sample need a "
                             "questions file, the campaign's questions export)")
    if (doc_entities < 0).any():
        bad = str(run.doc_names[int(np.flatnonzero(doc_entities < 0)[0])])
        raise RunImportError(f"{path}:{_line_of(path, 2, bad)}: entity {shown(bad)} is not an entity of {kg.name}")
    retrieved = ~unretrieved  # -inf lines are left out: not retrieved, as if absent
    rows, entities, scores = query_rows[run.query[retrieved]], doc_entities[run.doc[retrieved]], run.score[retrieved]
    kept = run_arrays(asked, rows, entities, scores)
    in_sample = rows < len(sq)  # the ranking (pooling) covers the sample's questions
    rows, entities, scores = rows[in_sample], entities[in_sample], scores[in_sample]

    filter_sets = question_filter(kg, sq.questions)
    num_entities, num_questions = kg.num_entities, len(sq)
    order = np.lexsort((entities, rows))
    rows, entities, scores = rows[order], entities[order], scores[order]
    # k: the most unfiltered candidates a question has in the run
    filtered = _in_sets(filter_sets, rows, entities, num_entities)
    per_question = np.bincount(rows[~filtered], minlength=num_questions)
    k = max(1, int(per_question.max(initial=0)))
    # the run as sparse rows (unretrieved entities -inf): the engine builds (batch x block) scores from them, never
    # a questions x entities matrix (issue 18)
    offsets = np.zeros(num_questions + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_questions), out=offsets[1:])
    run_scores = SparseScores(offsets, entities, scores.astype(np.float64), num_entities)
    result = _drop_unscored(rank(run_scores, sq.questions, num_entities=num_entities, filter=filter_sets,
                                 targets=sq.answers, k=k, memory_budget=rank_memory_budget()))  # -inf: not in the run
    config = {"run_file": str(path.resolve()), "tag": run.tag, "sample": sample.name, "description": description,
              **unretrieved_report}
    if questions_path is not None:
        config["questions_file"] = str(Path(questions_path).resolve())
    return _store_imported(sample, name, result, config, kept)


def _read_run_file(path: Path):
    """The run, after checking that its fields are no longer than an entity key (the TREC reader checks that it
    is a regular file, and its lines and fields against its own, looser limits)."""
    from evaluation.core.trec import TrecFormatError, read_run

    limit = Entity._meta.get_field("key").max_length
    try:
        data = userfiles.read_bytes(path)
        userfiles.check_line_lengths(path, data)  # first: a 30 MB line is a long line, not a long key
        userfiles.check_field_lengths(path, data, limit, "qids, entity keys and run tags")
        return read_run(path, data)
    except (userfiles.UserFileError, TrecFormatError) as exc:
        raise RunImportError(str(exc)) from None


# ------------------------------------------------------------------------------------ score matrix import
#: Default depth of an imported matrix's stored ranking: every candidate up to this many (a full ordering of millions
#: of entities per question would be the dense matrix again); pools are far shallower.
IMPORTED_DEPTH = 1_000


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
    question of the sample must be scored exactly once. A ``questions_path`` in the format of the campaign's
    ``questions`` export (``qid<TAB>entity<TAB>relation``) may also name questions beyond the sample (the other
    side of positive pool triples, ranked by the completed micro metrics). Scores: NaN and -inf mean "not
    scored" (rank last, never pooled); +inf is refused; a question whose row holds no finite score is counted in
    the system's ``config["unscored_questions"]``, and a matrix with no finite score at all is refused. The
    declared shapes (.npy headers) are checked against the sample and the KG before anything is loaded. The
    matrix is ranked by the engine exactly like a trained system (known triples filtered, the sample's answers as
    targets) to depth ``k`` (default :data:`IMPORTED_DEPTH` or every candidate when fewer; at most every candidate)
    for pooling, and kept as given
    (``Ranking.scores_file``, see ``pooling.services.imported_scores``): evaluation ranks from it exactly like a
    trained model. Validation happens before any write. The matrix is read block by block into a file-backed array
    (``STORAGE_DIR/spool``, an unnamed file) and ranked in entity blocks: memory stays bounded (issue 18).
    """
    from pooling.engine.ranking import rank, score_fn_from_matrix
    from pooling.services.imported_scores import matrix_arrays, read_questions_file, sample_only

    error = ScoresImportError
    path = Path(scores_path)
    kg = sample.kg
    name = _new_system_name(kg, name, error)
    if k is not None and k < 1:
        raise error(f"k must be >= 1, got {k}")
    sq = sample_questions(sample)
    num_entities, num_questions = kg.num_entities, len(sq)
    if num_questions == 0:
        raise error(f"sample {sample.name} has no questions")
    if not path.exists():
        raise error(f"{path}: no such file")
    asked, file_rows = sample_only(sq), None
    if questions_path is not None:
        asked, file_rows = read_questions_file(Path(questions_path), sample, sq, error)
    with ExitStack() as stack:  # the spool file lives until the matrix is stored and ranked
        try:
            with ArrayFile(path, ("scores", "entities", "qids"), default_name="scores") as stored:
                scores_info = _score_array(path, stored)
                num_rows, num_columns = scores_info.shape
                # A valid matrix has exactly one row per question and one column per entity: a larger declared
                # shape is refused before anything is loaded (smaller ones get the index files' precise messages).
                if num_columns > num_entities:
                    raise error(f"{path}: the matrix has {num_columns} columns but {kg.name} has {num_entities} "
                                "entities (one column per entity)")
                if num_rows > len(asked):
                    named = (f"{questions_path} names {len(asked)} questions" if questions_path is not None
                             else f"sample {sample.name} has {num_questions} questions")
                    raise error(f"{path}: the matrix has {num_rows} rows but {named} (one row per question)")
                columns = _column_index(path, stored, kg, num_columns, entity_index_path)
                rows = _row_index(path, stored, sample, sq.qids, num_rows, questions_path, file_rows)
                # align: row i = question i of ``asked`` (the sample's, then any beyond it), column e = entity e; into
                # a file-backed array, read block by block: never the whole matrix in memory (issue 18)
                given = scores_info.dtype
                dtype = np.float64 if given.kind in "iu" or given.itemsize > 4 else np.float32
                matrix = stack.enter_context(_spooled((len(asked), num_entities), dtype))
                check = _ValueCheck(num_questions, num_entities)
                try:
                    row_index = rows if rows is not None else np.arange(num_rows)
                    column_index = columns if columns is not None else np.arange(num_columns)
                    for first_row, first_column, block in scores_info.blocks():
                        block_rows = row_index[first_row:first_row + block.shape[0]]
                        block_columns = column_index[first_column:first_column + block.shape[1]]
                        check.add(block, block_rows, block_columns)
                        matrix[block_rows[:, None], block_columns[None, :]] = block
                except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                    raise UserFileError(path, None, f"`{scores_info.name}`: cannot read the data "
                                                    f"({shown(str(exc), 200)})") from None
        except UserFileError as exc:
            raise error(f"{exc.where}: cannot read the score file: {exc.message}") from None
        unscored = check.verdict(path, sq.qids, kg)
        kept = matrix_arrays(asked, matrix)
        filter_sets = question_filter(kg, sq.questions)
        most = max(1, num_entities - int(filter_sets.lengths.min()))  # the most candidates a question has
        k = min(most, IMPORTED_DEPTH) if k is None else min(k, most)
        result = _drop_unscored(rank(score_fn_from_matrix(matrix[:num_questions]), sq.questions,
                                     num_entities=num_entities, filter=filter_sets, targets=sq.answers, k=k,
                                     memory_budget=rank_memory_budget()))
        config = {"scores_file": str(path.resolve()), "sample": sample.name, "description": description}
        if unscored:
            config["unscored_questions"] = unscored
        if entity_index_path is not None:
            config["entity_index_file"] = str(Path(entity_index_path).resolve())
        if questions_path is not None:
            config["questions_file"] = str(Path(questions_path).resolve())
        return _store_imported(sample, name, result, config, kept)


def _score_array(path: Path, stored: ArrayFile) -> StoredArray:
    """The header of the ``scores`` array, checked: 2-d, non-empty, real numbers."""
    error = ScoresImportError
    info = stored.arrays.get("scores")
    if info is None:
        raise error(f"{path}: the npz file has no `scores` array (it has: {', '.join(stored.members) or 'nothing'})")
    if len(info.shape) != 2:
        raise error(f"{path}: scores must be a 2-d array (questions, entities), got shape {info.shape}")
    if info.dtype.kind not in "fiu":
        raise error(f"{path}: scores must be numbers (float), got dtype {info.dtype}")
    if 0 in info.shape:
        raise error(f"{path}: the score matrix is empty (shape {info.shape})")
    return info


def _column_index(path: Path, stored: ArrayFile, kg: Any, num_columns: int,
                  entity_index_path: Path | str | None) -> np.ndarray | None:
    """Entity index of every matrix column (None: the columns are 0..E-1)."""
    error = ScoresImportError
    num_entities = kg.num_entities
    npz_entities = stored.arrays.get("entities")
    if entity_index_path is not None and npz_entities is not None:
        raise error(f"{path} holds an `entities` array and an entity index file was also given: use one")
    if entity_index_path is None and npz_entities is None:
        if num_columns != num_entities:
            raise error(f"{path}: the matrix has {num_columns} columns but {kg.name} has {num_entities} entities "
                        "(without an entity index, columns are the entity indices 0..E-1)")
        return None
    index_of = {key: i for i, key in enumerate(entity_keys(kg))}
    if entity_index_path is not None:
        columns = _text_index(Path(entity_index_path), index_of, "entity", f"an entity of {kg.name}")
        source = f"{entity_index_path}"
    else:
        _check_name_array(path, npz_entities, num_columns, "columns")
        columns = _array_index(path, "entities", load_checked(path, npz_entities), index_of, f"an entity of {kg.name}")
        source = f"{path} (entities)"
    if columns.size != num_columns:
        raise error(f"{source} names {columns.size} entities but the matrix in {path} has {num_columns} columns")
    if columns.size != num_entities:
        missing = np.setdiff1d(np.arange(num_entities), columns)
        keys = entity_keys(kg)
        raise error(f"{source} misses {missing.size} of the {num_entities} entities of {kg.name} "
                    f"(e.g. {', '.join(shown(keys[i]) for i in missing[:3])}); every entity needs a score")
    return columns


def _row_index(path: Path, stored: ArrayFile, sample: Sample, qids: list[str], num_rows: int,
               questions_path: Path | str | None, file_rows: np.ndarray | None) -> np.ndarray | None:
    """Question row of every matrix row (None: the rows follow the questions' positions); ``file_rows``: the
    rows the questions file names (rows past the sample's are questions beyond it)."""
    error = ScoresImportError
    num_questions = len(qids)
    npz_qids = stored.arrays.get("qids")
    if questions_path is not None and npz_qids is not None:
        raise error(f"{path} holds a `qids` array and a questions file was also given: use one")
    if questions_path is None and npz_qids is None:
        if num_rows != num_questions:
            raise error(f"{path}: the matrix has {num_rows} rows but sample {sample.name} has {num_questions} "
                        "questions (without qids, rows follow the questions' positions)")
        return None
    row_of = {qid: row for row, qid in enumerate(qids)}
    what = f"a question of sample {sample.name} (its qids are head0.., tail0..)"
    if questions_path is not None:
        rows = np.asarray(file_rows, dtype=np.int64)
        source = f"{questions_path}"
    else:
        _check_name_array(path, npz_qids, num_rows, "rows")
        rows = _array_index(path, "qids", load_checked(path, npz_qids), row_of, what)
        source = f"{path} (qids)"
    if rows.size != num_rows:
        raise error(f"{source} names {rows.size} questions but the matrix in {path} has {num_rows} rows")
    missing = np.setdiff1d(np.arange(num_questions), rows)
    if missing.size:
        raise error(f"{source} misses {missing.size} of the {num_questions} questions of sample {sample.name} "
                    f"(e.g. {', '.join(qids[i] for i in missing[:3])}); every question needs a row")
    return rows


def _check_name_array(path: Path, info: StoredArray, expected: int, what: str) -> None:
    """An npz ``entities`` / ``qids`` header: 1-d strings, one per matrix row / column, no longer than an
    entity key (checked before the strings are loaded)."""
    error = ScoresImportError
    if len(info.shape) != 1:
        raise error(f"{path}: `{info.name}` must be a 1-d array of strings, got shape {info.shape}")
    if info.dtype.kind not in "US":
        raise error(f"{path}: `{info.name}` must hold strings, got dtype {info.dtype}")
    chars = info.dtype.itemsize // (4 if info.dtype.kind == "U" else 1)
    limit = Entity._meta.get_field("key").max_length
    if chars > limit:
        raise error(f"{path}: `{info.name}` holds strings of up to {chars:,} characters; keys and qids are at "
                    f"most {limit}")
    if info.shape[0] != expected:
        noun = "entities" if info.name == "entities" else "questions"
        raise error(f"{path} ({info.name}) names {info.shape[0]} {noun} but the matrix in {path} has {expected} {what}")


class _ValueCheck:
    """The score values, checked block by block: +inf is refused (the first in question / entity order is named), as is
    a matrix without any finite score on the sample's questions; questions whose row holds none are counted."""

    def __init__(self, num_questions: int, num_entities: int) -> None:
        self.num_questions, self.num_entities = num_questions, num_entities
        self.positive = 0
        self.first_positive: int | None = None  # row * E + column of the first +inf
        self.scored = np.zeros(num_questions, dtype=bool)

    def add(self, block: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> None:
        """A block of the matrix: its rows are questions ``rows``, its columns entities ``columns``."""
        in_sample = rows < self.num_questions  # questions beyond the sample are kept, not checked
        block, rows = block[in_sample], rows[in_sample]
        positive_rows, positive_columns = np.nonzero(np.isposinf(block))
        if positive_rows.size:
            self.positive += positive_rows.size
            first = int((rows[positive_rows] * self.num_entities + columns[positive_columns]).min())
            self.first_positive = first if self.first_positive is None else min(self.first_positive, first)
        self.scored[rows] |= np.isfinite(block).any(axis=1)

    def verdict(self, path: Path, qids: list[str], kg: Any) -> int:
        """The number of the sample's questions without a finite score; ScoresImportError for +inf or none at all."""
        error = ScoresImportError
        if self.first_positive is not None:
            row, column = divmod(self.first_positive, self.num_entities)
            raise error(f"{path}: {self.positive} scores are +inf (e.g. {qids[row]} / "
                        f"{shown(entity_keys(kg)[column])}): scores must be finite; NaN or -inf mark an entity as "
                        "not scored")
        unscored = int(self.scored.size - self.scored.sum())
        if unscored == self.scored.size:
            raise error(f"{path}: none of the {unscored} rows holds a finite score (all NaN / -inf): nothing to "
                        "import")
        return unscored


@contextmanager
def _spooled(shape: tuple[int, int], dtype: type) -> Iterator[np.ndarray]:
    """A zero-filled array backed by an unnamed file beside the stored files (a big disk, not a RAM-backed /tmp);
    the file is gone when the block ends, and so is the folder when no other import uses it."""
    folder = storage_path("spool")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryFile(dir=folder, prefix="scores-") as spool:
            yield np.memmap(spool, dtype=dtype, mode="w+", shape=shape)
    finally:
        try:
            folder.rmdir()
        except OSError:  # another import spools there
            pass


def _array_index(path: Path, array: str, values: np.ndarray, index_of: dict[str, int], what: str) -> np.ndarray:
    """The indices named by an npz string array (one per row / column), refusing unknown or repeated names."""
    error = ScoresImportError
    names = [value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value) for value in values.tolist()]
    result = np.empty(len(names), dtype=np.int64)
    first: dict[str, int] = {}
    for position, key in enumerate(names):
        if key not in index_of:
            raise error(f"{path}: {array}[{position}] {shown(key)} is not {what}")
        if key in first:
            raise error(f"{path}: {array}[{position}] {shown(key)} repeats {array}[{first[key]}]")
        first[key] = position
        result[position] = index_of[key]
    return result


def _text_index(path: Path, index_of: dict[str, int], noun: str, what: str,
                field: Callable[[str], str] = str.strip) -> np.ndarray:
    """The indices named by a text file with one name per line, refusing unknown, repeated or empty lines."""
    error = ScoresImportError
    try:
        text = userfiles.read_text(path, universal_newlines=True)
    except userfiles.UserFileError as exc:
        raise error(f"{exc.where}: cannot read the file: {exc.message}") from None
    lines = text.split("\n")  # line ends only (str.splitlines() also splits on \x1c, \x85...)
    if lines and lines[-1] == "":
        lines.pop()
    result = []
    first: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        key = field(line)
        if not key:
            raise error(f"{path}:{number}: empty line (expected one {noun} per line)")
        if key not in index_of:
            raise error(f"{path}:{number}: {noun} {shown(key)} is not {what}")
        if key in first:
            raise error(f"{path}:{number}: {noun} {shown(key)} repeats line {first[key]}")
        first[key] = number
        result.append(index_of[key])
    return np.array(result, dtype=np.int64)


# ------------------------------------------------------------------------------------ shared by the importers
def _new_system_name(kg: Any, name: str, error: type[RunImportError]) -> str:
    """The stripped name of a new imported system, refused when not a slug (pooling.services.names) or
    already taken in the KG."""
    name = checked_name("system", name.strip(), error)
    if System.objects.filter(kg=kg, name=name).exists():
        raise error(f"a system named {name!r} already exists in {kg.name}")
    return name


def _drop_unscored(part: "RankingResult") -> "RankingResult":
    """Top-k slots scored -inf (not retrieved / NaN) become padding (-1 / NaN), so they are never pooled."""
    unretrieved = ~(part.topk_scores > -np.inf)  # -inf and NaN padding
    part.topk_entities[unretrieved] = -1
    part.topk_scores[unretrieved] = np.nan
    return part


def _store_imported(sample: Sample, name: str, result: "RankingResult", config: dict[str, Any],
                    scores: dict[str, np.ndarray]) -> System:
    """Write an imported system, its ranking on the sample and its scores as given together: one transaction,
    the files written atomically last and removed again if the transaction fails."""
    from pooling.services.imported_scores import scores_file_name

    written: list[str] = []
    try:
        with transaction.atomic():
            system = System.objects.create(
                kg=sample.kg, name=name, architecture="", origin=System.Origin.IMPORTED, status=System.Status.READY,
                config=config,
            )
            relative = f"rankings/{sample.pk}/{system.pk}-{system.name}.npz"
            scores_relative = scores_file_name(sample.pk, system.pk, system.name)
            written += [relative, scores_relative]
            save_arrays(relative, **result.to_arrays())
            save_arrays(scores_relative, **scores)
            Ranking.objects.create(system=system, sample=sample, k=result.k, filter=FILTER_ALL,
                                   ranking_file=relative, scores_file=scores_relative, mrr=result_mrr(result))
    except BaseException as exc:
        for relative in written:
            remove_file(relative)
        if isinstance(exc, IntegrityError) and System.objects.filter(kg=sample.kg, name=name).exists():
            # another import of the same name committed first (two commands started together): one line
            raise RunImportError(f"a system named {name!r} was imported into {sample.kg.name} by another command "
                                 "while this one ran") from None
        raise
    return system


def _in_sets(sets: Ragged, rows: np.ndarray, values: np.ndarray, num_entities: int) -> np.ndarray:
    keys = sets.row_ids() * num_entities + sets.values  # sorted: rows ascending, values sorted within
    wanted = rows * num_entities + values
    if keys.size == 0:
        return np.zeros(wanted.size, dtype=bool)
    position = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    return keys[position] == wanted


_RUN_SEPARATORS = re.compile(r"[ \t\r]+")  # as the TREC reader splits fields


def _run_lines(path: Path):
    """(1-based line number, fields) of a run file already read once (a regular file)."""
    with userfiles.open_regular(path) as stream:
        for number, raw in enumerate(stream, start=1):
            yield number, [field for field in _RUN_SEPARATORS.split(raw.decode("utf-8", "replace").rstrip("\n"))
                           if field]


def _line_of(path: Path, column: int, value: str) -> int | str:
    """1-based number of the first line whose ``column`` equals ``value`` (for error messages)."""
    for number, fields in _run_lines(path):
        if len(fields) > column and fields[column] == value:
            return number
    return "?"


def _line_of_pair(path: Path, qid: str, doc: str) -> int | str:
    """1-based number of the line of ``qid``'s ``doc`` (unique in an accepted run)."""
    for number, fields in _run_lines(path):
        if len(fields) > 2 and fields[0] == qid and fields[2] == doc:
            return number
    return "?"
