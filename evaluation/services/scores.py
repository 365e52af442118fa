"""Where a system's scores come from: one score function per system, whichever way the system entered kgpool.

- trained systems and imported checkpoints (PyKEEN, ``origin`` trained): the model scores any question;
- score matrices (``import_scores``): the stored matrix as given; a question without a row is not scored;
- TREC runs (``import_run``): the stored run entries as given; an entity outside a question's run is *not
  retrieved* (score -inf, as in trec_eval), a question outside the run is not scored at all.

Each source is a :data:`pooling.engine.ranking.ScoreFn`, so ``evaluation.services.ranks`` ranks every system with
the same engine, the same filter and the same tie rule: identical scores give identical ranks, to the last decimal
(a trained model and its own exported score matrix, or a run that holds every candidate it ranks above a judged
entity). Unscored entries are -inf: they tie with each other and rank below every scored candidate -- that is the
convention for micro metrics and PROBE, which need a rank for every answer (the realistic tie rank among the
unretrieved), while macro metrics treat them as not retrieved (``JudgedRanks.retrieved``). The report counts them
per system (``evaluation.services.coverage``).

Imported systems from before ``Ranking.scores_file`` existed kept only their top-k and the ranks of the sample's
answers, which cannot give macro ranks (those filter train + valid only) nor ranks of judged entities below the
stored depth: they are refused with a request to re-import. torch is imported only inside ``score_fn``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.services.errors import EvaluationError
from pooling.engine.questions import Questions, Ragged
from pooling.models import Ranking, Sample, System
from pooling.storage import load_arrays, storage_path


def _file_fingerprint(kind: str, relative: str, system: System) -> str:
    try:
        stat = storage_path(relative).stat()
    except OSError:
        raise EvaluationError(f"system {system.name!r}: file {relative} is missing") from None
    return f"{kind}:{relative}:{stat.st_size}:{stat.st_mtime_ns}"


@dataclass
class SystemScores:
    """The scores of one system on one sample's KG (see the module doc). Subclasses give ``score_fn``."""

    system: System
    num_entities: int
    num_relations: int
    kind: str = ""
    fingerprint: str = ""

    def score_fn(self, device: str | None) -> Any:
        raise NotImplementedError

    def device(self, requested: str | None) -> str:
        """The torch device ranking this source runs on."""
        return "cpu"

    def coverage(self, questions: Questions, tv_filter: Ragged) -> tuple[np.ndarray, np.ndarray]:
        """Per question: (scored: the system has scores for it, num_retrieved: the length of its ranking after the
        macro filter, -1 = every candidate is ranked)."""
        return np.ones(len(questions), dtype=bool), np.full(len(questions), -1, dtype=np.int64)


@dataclass
class ModelScores(SystemScores):
    """A trained model (or an imported checkpoint): every question, every entity."""

    def device(self, requested: str | None) -> str:
        from pooling.kge import resolve_device

        return str(resolve_device(requested))

    def score_fn(self, device: str | None) -> Any:
        from pooling.kge import model_score_fn
        from pooling.services.systems import load_system_model

        return model_score_fn(load_system_model(self.system, device=self.device(device)))


@dataclass
class StoredScores(SystemScores):
    """Scores kept by an import (``pooling.services.imported_scores``): rows by question key."""

    relative: str = ""
    _data: dict[str, np.ndarray] | None = field(default=None, repr=False)
    _order: np.ndarray | None = field(default=None, repr=False)
    _sorted_keys: np.ndarray | None = field(default=None, repr=False)

    @property
    def data(self) -> dict[str, np.ndarray]:
        if self._data is None:
            self._data = load_arrays(self.relative)
            keys = self._question_keys(self._data["side"], self._data["relation"], self._data["anchor"])
            self._order = np.argsort(keys, kind="stable")
            self._sorted_keys = keys[self._order]
        return self._data

    def _question_keys(self, side: np.ndarray, relation: np.ndarray, anchor: np.ndarray) -> np.ndarray:
        side = np.asarray(side, dtype=np.int64)
        return (side * self.num_relations + np.asarray(relation, dtype=np.int64)) * self.num_entities \
            + np.asarray(anchor, dtype=np.int64)

    def stored_rows(self, side: np.ndarray, relation: np.ndarray, anchor: np.ndarray) -> np.ndarray:
        """The stored row of each question, -1 where the import holds none."""
        _ = self.data
        wanted = self._question_keys(side, relation, anchor)
        if self._sorted_keys.size == 0:
            return np.full(wanted.size, -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self._sorted_keys, wanted), self._sorted_keys.size - 1)
        return np.where(self._sorted_keys[position] == wanted, self._order[position], -1)

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def score_fn(self, device: str | None) -> Any:
        import torch

        def score(anchor: Any, relation: Any, side: int) -> Any:
            anchor_np = anchor.detach().cpu().numpy()
            rows = self.stored_rows(np.full(anchor_np.size, side), relation.detach().cpu().numpy(), anchor_np)
            return torch.from_numpy(self._rows(rows)).to(anchor.device)

        return score

    def coverage(self, questions: Questions, tv_filter: Ragged) -> tuple[np.ndarray, np.ndarray]:
        rows = self.stored_rows(questions.side, questions.relation, questions.anchor)
        return rows >= 0, np.where(rows >= 0, -1, 0).astype(np.int64)


@dataclass
class MatrixSource(StoredScores):
    """An imported score matrix: one row of E scores per question it holds."""

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        matrix = self.data["scores"]
        out = np.full((rows.size, self.num_entities), -np.inf, dtype=matrix.dtype)
        present = rows >= 0
        out[present] = matrix[rows[present]]
        return out


@dataclass
class RunSource(StoredScores):
    """An imported TREC run: the scores of the entities it retrieved for each question it answers."""

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        data = self.data
        offsets, entities, scores = data["offsets"], data["entities"], data["scores"]
        out = np.full((rows.size, self.num_entities), -np.inf, dtype=np.float64)
        for local, row in enumerate(rows.tolist()):
            if row >= 0:
                start, stop = offsets[row], offsets[row + 1]
                out[local, entities[start:stop]] = scores[start:stop]
        return out

    def coverage(self, questions: Questions, tv_filter: Ragged) -> tuple[np.ndarray, np.ndarray]:
        """Scored = the run answers the question; num_retrieved = its entries that the macro filter keeps."""
        rows = self.stored_rows(questions.side, questions.relation, questions.anchor)
        offsets, entities = self.data["offsets"], self.data["entities"]
        num_retrieved = np.zeros(len(questions), dtype=np.int64)
        for index, row in enumerate(rows.tolist()):
            if row >= 0:
                retrieved = entities[offsets[row]:offsets[row + 1]]
                num_retrieved[index] = retrieved.size - np.isin(retrieved, tv_filter.row(index)).sum()
        return rows >= 0, num_retrieved


def system_scores(system: System, sample: Sample) -> SystemScores:
    """The score source of ``system`` for evaluating ``sample``; EvaluationError when it has none."""
    kg = sample.kg
    sizes = {"num_entities": max(kg.num_entities, 1), "num_relations": max(kg.num_relations, 1)}
    if system.origin == System.Origin.TRAINED and system.checkpoint_file:
        return ModelScores(system, kind="model",
                           fingerprint=_file_fingerprint("trained", system.checkpoint_file, system), **sizes)
    ranking = Ranking.objects.filter(system=system, sample=sample).first()
    if ranking is None:
        raise EvaluationError(f"system {system.name!r} has no checkpoint and no ranking on sample {sample.name!r}")
    if not ranking.scores_file:
        raise EvaluationError(f"system {system.name!r} was imported before kgpool kept imported scores: its stored "
                              "top-k cannot give macro ranks or ranks below its depth; import it again "
                              "(import_scores / import_run) to evaluate it")
    fingerprint = _file_fingerprint("imported", ranking.scores_file, system)
    try:
        with np.load(storage_path(ranking.scores_file), allow_pickle=False) as data:
            kind = str(data["kind"]) if "kind" in data.files else ""
    except (OSError, ValueError):
        kind = ""
    source = {"matrix": MatrixSource, "run": RunSource}.get(kind)
    if source is None:
        raise EvaluationError(f"system {system.name!r}: {ranking.scores_file} is not a score matrix or run")
    return source(system, kind=kind, fingerprint=fingerprint, relative=ranking.scores_file, **sizes)


def has_scores(system: System, sample: Sample) -> bool:
    """Whether ``system`` can be evaluated on ``sample``: ready, same KG, and a model or kept scores."""
    if system.kg_id != sample.kg_id or system.status != System.Status.READY:
        return False
    if system.origin == System.Origin.TRAINED and system.checkpoint_file:
        return True
    return Ranking.objects.filter(system=system, sample=sample).exclude(scores_file="").exists()
