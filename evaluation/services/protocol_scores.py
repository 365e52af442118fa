"""Scores for the protocols beyond link prediction (issue 16), per system kind, where the system's data allows.

Each function takes a :class:`evaluation.services.scores.SystemScores` (``system_scores(system, sample)``) and
either returns what was asked or raises :class:`NotComputable` with the reason the report shows
("not computed: <reason>"):

- :func:`triple_scores` -- the score of given (h, r, t) triples (triple classification):
  trained / imported checkpoints exactly, via the model; a score matrix the entries it holds; a run the entries it
  lists. A triple's score is the tail question's (h, r, ?) entry for t, as models with reciprocal relations score
  the two sides differently; a kept matrix / run without that row falls back to the head question (?, r, t)'s
  entry for h. A triple without any entry leaves the protocol not computed (thresholds and AUCs on a subset would
  compare systems on different triples).
- :func:`pair_block_scorer` -- ``(relation, head_ids) -> scores [len(head_ids), E]`` of every (h, t) pair
  (entity-pair ranking): models (``pooling.kge.protocol_scoring``: NumPy's product for bilinear models on the
  CPU); a matrix only when it has the tail question (h, r, ?) of every head of every
  relation asked; runs never (they list a few entities of some questions, not all pairs).
- :func:`relation_scorer` -- ``head_ids -> scores [len(head_ids), R]`` (property prediction): a relation's score for
  h is the best score of any tail, max over t of f(h, r, t); models, and matrices holding (h, r, ?) for every
  relation of every head asked.

torch is imported only when a model scores.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evaluation.services.scores import MatrixSource, ModelScores, RunSource, StoredScores, SystemScores
from pooling.engine.questions import HEAD, TAIL

BlockScorer = Callable[[int, np.ndarray], np.ndarray]
RelationScorer = Callable[[np.ndarray], np.ndarray]
TRIPLE_BATCH = 1024


class NotComputable(Exception):
    """The system's data cannot give this protocol; ``str(exc)`` is the reason shown in the report."""


def _model_score_fn(source: ModelScores, device: str | None):
    return source.score_fn(device)


def _model(source: ModelScores, device: str | None):
    from pooling.services.systems import load_system_model

    return load_system_model(source.system, device=source.device(device))


def _torch_rows(score_fn, anchor: np.ndarray, relation: np.ndarray, side: int, device: str) -> np.ndarray:
    import torch

    out = score_fn(torch.from_numpy(np.ascontiguousarray(anchor, dtype=np.int64)).to(device),
                   torch.from_numpy(np.ascontiguousarray(relation, dtype=np.int64)).to(device), side)
    return out.detach().float().cpu().numpy()


def _model_triple_scores(source: ModelScores, triples: np.ndarray, device: str | None) -> np.ndarray:
    score_fn = _model_score_fn(source, device)
    resolved = source.device(device)
    out = np.empty(len(triples), dtype=np.float64)
    for start in range(0, len(triples), TRIPLE_BATCH):
        chunk = triples[start:start + TRIPLE_BATCH]
        rows = _torch_rows(score_fn, chunk[:, 0], chunk[:, 1], TAIL, resolved)
        out[start:start + len(chunk)] = rows[np.arange(len(chunk)), chunk[:, 2]]
    return out


def _stored_entry(source: StoredScores, rows: np.ndarray, entities: np.ndarray) -> np.ndarray:
    """The kept score of ``entities[i]`` in stored row ``rows[i]``; NaN where the row or the entry is absent."""
    out = np.full(rows.size, np.nan)
    present = rows >= 0
    if isinstance(source, MatrixSource):
        matrix = source.data["scores"]
        out[present] = matrix[rows[present], entities[present]]
        return out
    offsets, listed, scores = source.data["offsets"], source.data["entities"], source.data["scores"]
    for index in np.flatnonzero(present).tolist():
        start, stop = offsets[rows[index]], offsets[rows[index] + 1]
        hit = np.flatnonzero(listed[start:stop] == entities[index])
        if hit.size:
            out[index] = scores[start + hit[0]]
    return out


def _stored_triple_scores(source: StoredScores, triples: np.ndarray) -> np.ndarray:
    h, r, t = triples[:, 0], triples[:, 1], triples[:, 2]
    scores = _stored_entry(source, source.stored_rows(np.full(len(triples), TAIL), r, h), t)
    missing = np.isnan(scores)
    if missing.any():
        back = _stored_entry(source, source.stored_rows(np.full(int(missing.sum()), HEAD), r[missing], t[missing]),
                             h[missing])
        scores[missing] = back
    return scores


def triple_scores(source: SystemScores, triples: np.ndarray, *, device: str | None = None) -> np.ndarray:
    """float64 scores of ``triples`` [n, 3] (higher = more plausible); NotComputable when some have none."""
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if isinstance(source, ModelScores):
        return _model_triple_scores(source, triples, device)
    if not isinstance(source, StoredScores):
        raise NotComputable(f"{source.kind or 'this kind of'} system has no triple scores")
    scores = _stored_triple_scores(source, triples)
    scores[np.isneginf(scores)] = np.nan  # -inf: not retrieved, as in trec_eval
    missing = int(np.isnan(scores).sum())
    if missing:
        what = "score matrix" if isinstance(source, MatrixSource) else "run"
        raise NotComputable(f"the {what} has no score for {missing} of the {len(triples)} triples to classify "
                            f"(no entry in the (h, r, ?) or (?, r, t) row)")
    return scores


def _rows_of_every_head(source: StoredScores, relations: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """Stored rows of the tail questions (h, r, ?), [len(heads), len(relations)], -1 where absent."""
    grid_r = np.repeat(relations, heads.size)
    grid_h = np.tile(heads, relations.size)
    rows = source.stored_rows(np.full(grid_r.size, TAIL), grid_r, grid_h)
    return rows.reshape(relations.size, heads.size).T


def pair_block_scorer(source: SystemScores, relations: np.ndarray, *, device: str | None = None) -> BlockScorer:
    """The scores of every (h, t) pair of a relation, a block of heads at a time (see the module doc)."""
    if isinstance(source, ModelScores):
        from pooling.kge.protocol_scoring import block_scorer

        return block_scorer(_model(source, device))
    if isinstance(source, RunSource):
        raise NotComputable("a run lists a few entities of some questions, not the scores of every (h, t) pair")
    if not isinstance(source, MatrixSource):
        raise NotComputable(f"{source.kind or 'this kind of'} system has no pair scores")
    relations = np.asarray(relations, dtype=np.int64)
    rows = _rows_of_every_head(source, relations, np.arange(source.num_entities))
    uncovered = int((rows < 0).any(axis=0).sum())
    if uncovered:
        raise NotComputable(f"the score matrix lacks rows (h, r, ?) for some heads of {uncovered} of the "
                            f"{relations.size} relations (pair ranking scores every head)")
    column = {int(r): i for i, r in enumerate(relations.tolist())}
    matrix = source.data["scores"]

    def score_stored(relation: int, head_ids: np.ndarray) -> np.ndarray:
        return np.asarray(matrix[rows[np.asarray(head_ids), column[int(relation)]]], dtype=np.float64)

    return score_stored


def relation_scorer(source: SystemScores, heads: np.ndarray, *, device: str | None = None) -> RelationScorer:
    """``head_ids -> [n, R]``: the best tail score of each relation for each head (see the module doc)."""
    num_relations = source.num_relations
    if isinstance(source, ModelScores):
        from pooling.kge.protocol_scoring import relation_scorer as model_relation_scorer

        return model_relation_scorer(_model(source, device), aggregate="max")
    if isinstance(source, RunSource):
        raise NotComputable("a run does not score every relation of a head (property prediction ranks all "
                            "relations)")
    if not isinstance(source, MatrixSource):
        raise NotComputable(f"{source.kind or 'this kind of'} system has no relation scores")
    heads = np.unique(np.asarray(heads, dtype=np.int64))
    rows = _rows_of_every_head(source, np.arange(num_relations), heads)
    missing = int((rows < 0).sum())
    if missing:
        raise NotComputable(f"the score matrix lacks {missing} of the {rows.size} rows (h, r, ?) that rank every "
                            f"relation of the {heads.size} heads asked")
    matrix = source.data["scores"]
    position = {int(h): i for i, h in enumerate(heads.tolist())}

    def score_stored(head_ids: np.ndarray) -> np.ndarray:
        local = np.array([position[int(h)] for h in np.asarray(head_ids).tolist()], dtype=np.int64)
        return np.asarray(matrix[rows[local]], dtype=np.float64).max(axis=2)

    return score_stored
