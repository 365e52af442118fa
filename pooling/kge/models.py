"""PyTorch knowledge-graph completion models scored 1-N (one question against all entities).

Conventions
-----------
* Entities are ids ``0..E-1`` and relations ``0..R-1``.
* A question is ``(anchor, relation, side)``; ``side == TAIL`` asks ``(anchor, r, ?)`` and
  ``side == HEAD`` asks ``(?, r, anchor)`` (``HEAD``/``TAIL`` from ``pooling.engine.questions``).
* **Every model uses reciprocal relations**: it owns ``2R`` relation parameters and a head question
  ``(?, r, t)`` is scored as the tail question ``(t, r + R, ?)``. This is required by ConvE and TuckER
  (their score is not symmetric in head and tail) and it makes 1-N training identical for every
  architecture, because only tail questions ever exist internally. For the symmetric DistMult it costs
  nothing but extra parameters; for TransE/RotatE/ComplEx/RESCAL it is the setting with which 1-N
  training is known to work best (Lacroix et al. 2018; Ruffinelli et al. 2020, "You CAN teach an old
  dog new tricks").
* Scores: higher = more plausible. Distance models return the negative distance.

Each class documents its default hyperparameters (constructor defaults, tuned to train well on small
graphs such as UMLS/Nations/Kinship) and carries ``TRAINING_DEFAULTS`` — the optimiser settings that go
with them (see ``pooling.kge.training.TrainingConfig.for_architecture``).
"""
from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from pooling.engine.questions import HEAD, TAIL  # numpy-only, Django-free


class KGCModel(nn.Module):
    """Base class: entity/relation counts, the reciprocal convention and 1-N scoring.

    Subclasses implement :meth:`tail_query` for a batch of (anchor, relation) pairs where ``relation``
    already lies in ``0..2R-1`` (reciprocals included); :meth:`score_query` compares it with entity
    embeddings (dot product unless overridden: distance models, ConvE's entity bias).
    """

    entity: nn.Embedding

    #: Optimiser settings that go with the default hyperparameters (epochs, lr, batch size, ...).
    TRAINING_DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self, num_entities: int, num_relations: int, **hparams: Any) -> None:
        super().__init__()
        if num_entities < 1 or num_relations < 1:
            raise ValueError("a model needs at least one entity and one relation")
        self.num_entities = int(num_entities)
        self.num_relations = int(num_relations)
        # Resolved hyperparameters, saved in checkpoints so a model rebuilds identically even if the
        # class defaults change later.
        self.hparams: dict[str, Any] = dict(hparams)

    @property
    def num_relation_embeddings(self) -> int:
        """Number of relation parameter rows: original relations plus their reciprocals."""
        return 2 * self.num_relations

    def internal_relation(self, relation: Tensor, side: int) -> Tensor:
        """Map a question's relation to the relation used to score it as a tail question."""
        if side == TAIL:
            return relation
        if side == HEAD:
            return relation + self.num_relations
        raise ValueError(f"side must be HEAD ({HEAD}) or TAIL ({TAIL}), got {side!r}")

    def score_questions(self, anchor: Tensor, relation: Tensor, side: int) -> Tensor:
        """Scores (B, E) of every entity as the missing side of B questions of one ``side``."""
        return self.score_tails(anchor, self.internal_relation(relation, side))

    def score_questions_block(self, anchor: Tensor, relation: Tensor, side: int, start: int, stop: int) -> Tensor:
        """Scores (B, stop - start) of entities start..stop-1 only: the columns of :meth:`score_questions`, in
        O(B x block) memory (the ranking engine's entity blocks, issue 18)."""
        query = self.tail_query(anchor, self.internal_relation(relation, side))
        return self.score_query(query, slice(start, stop))

    def score_tails(self, anchor: Tensor, relation: Tensor) -> Tensor:
        """Scores (B, E) of every entity as the tail of (anchor, relation, ?); relation in 0..2R-1."""
        return self.score_query(self.tail_query(anchor, relation), None)

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        """(B, D) representation of (anchor, relation, ?) that :meth:`score_query` compares with entities."""
        raise NotImplementedError

    def score_query(self, query: Tensor, candidates: Tensor | slice | None) -> Tensor:
        """Scores of candidate tails for queries from :meth:`tail_query`.

        ``candidates`` None: every entity, (B, E); a slice: that block of entities, (B, block); (K,) ids shared
        by all queries: (B, K); (B, K) ids, a row per query: (B, K). Only the candidates' embedding rows are
        read, so negative sampling (:mod:`pooling.kge.negative_sampling`) never builds a (B, E) tensor and its
        gradient is sparse.
        """
        embedding = _candidate_rows(self.entity, candidates)
        if embedding.dim() == 2:
            return query @ embedding.t()
        return torch.bmm(embedding, query.unsqueeze(-1)).squeeze(-1)

    def penalty(self, anchor: Tensor, relation: Tensor) -> Tensor:
        """Regularisation term for a training batch (added to the loss); zero unless overridden."""
        return anchor.new_zeros((), dtype=torch.float32)

    def extra_repr(self) -> str:
        return f"num_entities={self.num_entities}, num_relations={self.num_relations}, hparams={self.hparams}"


def _candidate_rows(entity: nn.Embedding, candidates: Tensor | slice | None) -> Tensor:
    """The entity rows :meth:`KGCModel.score_query` compares with: all, a block (slice) or looked-up ids."""
    if candidates is None:
        return entity.weight
    if isinstance(candidates, slice):
        return entity.weight[candidates]
    return entity(candidates)  # an embedding lookup: sparse gradient when the embedding is sparse


def _embedding(count: int, dim: int, std: float | None = None) -> nn.Embedding:
    embedding = nn.Embedding(count, dim)
    if std is None:
        nn.init.xavier_normal_(embedding.weight)
    else:
        nn.init.normal_(embedding.weight, std=std)
    return embedding


def _n3(*factors: Tensor) -> Tensor:
    """Weighted nuclear 3-norm of the batch factors (Lacroix et al. 2018), averaged over the batch."""
    batch = factors[0].shape[0]
    return sum(factor.abs().pow(3).sum() for factor in factors) / batch


# ----------------------------------------------------------------------------------------------
# Translational models
# ----------------------------------------------------------------------------------------------


class _DistanceModel(KGCModel):
    """Score = minus the p-distance between the query and the candidate's embedding."""

    p: int

    def score_query(self, query: Tensor, candidates: Tensor | slice | None) -> Tensor:
        embedding = _candidate_rows(self.entity, candidates)
        if embedding.dim() == 2:
            return -torch.cdist(query, embedding, p=self.p)
        return -torch.cdist(query.unsqueeze(1), embedding, p=self.p).squeeze(1)


class TransE(_DistanceModel):
    """TransE (Bordes et al. 2013): score(h, r, t) = -||h + r - t||_p.

    Defaults (UMLS-tuned): ``dim=100, p=1, dropout=0.3`` (dropout on the query h + r). Distances to
    all entities come from one ``torch.cdist``; p=2 uses the expanded-norm matmul trick and is ~9x
    faster on large graphs (FB15k-237 epoch on 1 CPU thread: 62 s vs 534 s), p=1 ranks better on
    small ones (UMLS test MRR 0.76 vs 0.68-0.69 with p=2). With softmax
    1-N training the margin is implicit in the scale of the distances, so there is no margin parameter.
    """

    TRAINING_DEFAULTS = {"epochs": 150, "lr": 0.01, "batch_size": 256, "label_smoothing": 0.0}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 100, p: int = 1,
                 dropout: float = 0.3) -> None:
        super().__init__(num_entities, num_relations, dim=dim, p=p, dropout=dropout)
        if p not in (1, 2):
            raise ValueError("TransE supports the L1 (p=1) and L2 (p=2) distance")
        self.p = p
        self.entity = _embedding(num_entities, dim)
        self.relation = _embedding(self.num_relation_embeddings, dim)
        self.dropout = nn.Dropout(dropout)

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        return self.dropout(self.entity(anchor) + self.relation(relation))


class RotatE(_DistanceModel):
    """RotatE (Sun et al. 2019): t ≈ h ∘ r with |r_i| = 1 in complex space.

    score(h, r, t) = -||h ∘ r - t|| over the 2·dim real coordinates (Re, Im). The paper sums the complex
    moduli instead (an L1 over complex coordinates), which needs a (B, E, dim) intermediate; the
    Euclidean variant here is computed for all entities with one ``torch.cdist`` (matmul trick) and
    trains well 1-N (UMLS test MRR 0.88; p=1 over the real coordinates gave 0.69; the paper's modulus
    sum was not tried). Defaults: ``dim=200`` complex dimensions (400 real
    numbers), ``p=2``, ``dropout=0.2`` on the rotated head.
    """

    TRAINING_DEFAULTS = {"epochs": 200, "lr": 0.01, "batch_size": 256, "label_smoothing": 0.0}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 200, p: int = 2,
                 dropout: float = 0.2) -> None:
        super().__init__(num_entities, num_relations, dim=dim, p=p, dropout=dropout)
        if p not in (1, 2):
            raise ValueError("RotatE supports p=1 and p=2 over the real coordinates")
        self.p = p
        self.dim = dim
        self.entity = _embedding(num_entities, 2 * dim)  # [Re | Im]
        self.phase = nn.Embedding(self.num_relation_embeddings, dim)
        nn.init.uniform_(self.phase.weight, -math.pi, math.pi)
        self.dropout = nn.Dropout(dropout)

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        head_re, head_im = self.entity(anchor).chunk(2, dim=-1)
        phase = self.phase(relation)
        rel_re, rel_im = torch.cos(phase), torch.sin(phase)
        query = torch.cat([head_re * rel_re - head_im * rel_im, head_re * rel_im + head_im * rel_re], dim=-1)
        return self.dropout(query)


# ----------------------------------------------------------------------------------------------
# Bilinear (decomposition) models: one matmul against the entity matrix
# ----------------------------------------------------------------------------------------------


class _BilinearModel(KGCModel):
    """Shared parts of DistMult / ComplEx / RESCAL: query vector @ entity matrix^T, N3 penalty."""

    entity: nn.Embedding

    def __init__(self, num_entities: int, num_relations: int, **hparams: Any) -> None:
        super().__init__(num_entities, num_relations, **hparams)
        self.input_dropout = nn.Dropout(hparams.get("dropout", 0.0))
        self.regularization = float(hparams.get("regularization", 0.0))

    def query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        raise NotImplementedError

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        return self.query(anchor, relation)


class DistMult(_BilinearModel):
    """DistMult (Yang et al. 2015): score = <h, r, t>.

    Defaults: ``dim=200, dropout=0.3`` (on the head embedding), ``regularization=0.0`` (N3 weight).
    """

    TRAINING_DEFAULTS = {"epochs": 150, "lr": 0.005, "batch_size": 256, "label_smoothing": 0.1}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 200, dropout: float = 0.3,
                 regularization: float = 0.0) -> None:
        super().__init__(num_entities, num_relations, dim=dim, dropout=dropout, regularization=regularization)
        self.entity = _embedding(num_entities, dim)
        self.relation = _embedding(self.num_relation_embeddings, dim)

    def query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        return self.input_dropout(self.entity(anchor)) * self.relation(relation)

    def penalty(self, anchor: Tensor, relation: Tensor) -> Tensor:
        if not self.regularization:
            return super().penalty(anchor, relation)
        return self.regularization * _n3(self.entity(anchor), self.relation(relation))


class ComplEx(_BilinearModel):
    """ComplEx (Trouillon et al. 2016): score = Re(<h, r, conj(t)>).

    Embeddings are stored as [Re | Im]; the score for all entities is one matmul of
    [Re(h∘r) | Im(h∘r)] with [Re(t) | Im(t)]. Defaults: ``dim=200`` complex dimensions,
    ``dropout=0.3``, ``regularization=0.0`` (N3 weight; 5e-3 to 1e-1 helps on FB15k-237).
    """

    TRAINING_DEFAULTS = {"epochs": 100, "lr": 0.005, "batch_size": 256, "label_smoothing": 0.1}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 200, dropout: float = 0.3,
                 regularization: float = 0.0) -> None:
        super().__init__(num_entities, num_relations, dim=dim, dropout=dropout, regularization=regularization)
        self.entity = _embedding(num_entities, 2 * dim)
        self.relation = _embedding(self.num_relation_embeddings, 2 * dim)

    def query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        head_re, head_im = self.input_dropout(self.entity(anchor)).chunk(2, dim=-1)
        rel_re, rel_im = self.relation(relation).chunk(2, dim=-1)
        return torch.cat([head_re * rel_re - head_im * rel_im, head_re * rel_im + head_im * rel_re], dim=-1)

    def penalty(self, anchor: Tensor, relation: Tensor) -> Tensor:
        if not self.regularization:
            return super().penalty(anchor, relation)
        # N3 on the complex moduli, as in Lacroix et al.
        head_re, head_im = self.entity(anchor).chunk(2, dim=-1)
        rel_re, rel_im = self.relation(relation).chunk(2, dim=-1)
        head_modulus = torch.sqrt(head_re**2 + head_im**2 + 1e-12)
        rel_modulus = torch.sqrt(rel_re**2 + rel_im**2 + 1e-12)
        return self.regularization * _n3(head_modulus, rel_modulus)


class RESCAL(_BilinearModel):
    """RESCAL (Nickel et al. 2011): score = h^T M_r t with a full dim x dim matrix per relation.

    Defaults: ``dim=64, dropout=0.5, regularization=0.0`` (RESCAL overfits small graphs quickly: at
    dim 128 / dropout 0.3 UMLS peaks after ~20 epochs). The 2R relation matrices cost 2R·dim²
    parameters (FB15k-237 at dim 128: 7.8M).
    """

    TRAINING_DEFAULTS = {"epochs": 100, "lr": 0.003, "batch_size": 256, "label_smoothing": 0.1}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 64, dropout: float = 0.5,
                 regularization: float = 0.0) -> None:
        super().__init__(num_entities, num_relations, dim=dim, dropout=dropout, regularization=regularization)
        self.dim = dim
        self.entity = _embedding(num_entities, dim)
        # Small random matrices (std 1/dim) keep the initial scores near zero like the other models.
        self.relation = nn.Embedding(self.num_relation_embeddings, dim * dim)
        nn.init.normal_(self.relation.weight, std=1.0 / dim)

    def query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        matrices = self.relation(relation).view(-1, self.dim, self.dim)
        head = self.input_dropout(self.entity(anchor))
        return torch.bmm(head.unsqueeze(1), matrices).squeeze(1)

    def penalty(self, anchor: Tensor, relation: Tensor) -> Tensor:
        if not self.regularization:
            return super().penalty(anchor, relation)
        return self.regularization * _n3(self.entity(anchor), self.relation(relation))


# ----------------------------------------------------------------------------------------------
# Neural models
# ----------------------------------------------------------------------------------------------


class ConvE(KGCModel):
    """ConvE (Dettmers et al. 2018): 2D convolution over stacked head/relation embeddings.

    score = f(vec(f([h̄; r̄] * ω)) W) · t + b_t. Defaults follow the paper at a size that suits small
    graphs: ``dim=200`` reshaped to ``20 x 10``, ``channels=32``, ``kernel_size=3``, dropouts
    ``input_dropout=0.2, feature_dropout=0.2, hidden_dropout=0.3``. ``embedding_height=None`` picks the
    largest divisor of ``dim`` not above sqrt(2·dim) (200 -> 20 x 10, 100 -> 10 x 10, 16 -> 4 x 4), so
    any reasonable ``dim`` works; the resolved value is recorded in ``hparams``.
    """

    TRAINING_DEFAULTS = {"epochs": 100, "lr": 0.003, "batch_size": 128, "label_smoothing": 0.1}

    def __init__(self, num_entities: int, num_relations: int, *, dim: int = 200,
                 embedding_height: int | None = None, channels: int = 32, kernel_size: int = 3,
                 input_dropout: float = 0.2, feature_dropout: float = 0.2, hidden_dropout: float = 0.3) -> None:
        if embedding_height is None:
            embedding_height = max(h for h in range(1, math.isqrt(2 * dim) + 1) if dim % h == 0)
        if dim % embedding_height:
            raise ValueError("dim must be a multiple of embedding_height")
        if min(2 * embedding_height, dim // embedding_height) < kernel_size:
            raise ValueError(f"the {2 * embedding_height} x {dim // embedding_height} input image is smaller than "
                             f"the {kernel_size} x {kernel_size} kernel; choose another dim/embedding_height")
        super().__init__(num_entities, num_relations, dim=dim, embedding_height=embedding_height,
                         channels=channels, kernel_size=kernel_size, input_dropout=input_dropout,
                         feature_dropout=feature_dropout, hidden_dropout=hidden_dropout)
        self.embedding_height = embedding_height
        self.embedding_width = dim // embedding_height
        self.entity = _embedding(num_entities, dim)
        self.relation = _embedding(self.num_relation_embeddings, dim)
        self.entity_bias = nn.Parameter(torch.zeros(num_entities))
        self.input_norm = nn.BatchNorm2d(1)
        self.input_dropout = nn.Dropout(input_dropout)
        self.conv = nn.Conv2d(1, channels, kernel_size)
        self.feature_norm = nn.BatchNorm2d(channels)
        self.feature_dropout = nn.Dropout2d(feature_dropout)
        image_height = 2 * embedding_height - kernel_size + 1
        image_width = self.embedding_width - kernel_size + 1
        self.hidden = nn.Linear(channels * image_height * image_width, dim)
        self.hidden_norm = nn.BatchNorm1d(dim)
        self.hidden_dropout = nn.Dropout(hidden_dropout)

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        shape = (-1, 1, self.embedding_height, self.embedding_width)
        image = torch.cat([self.entity(anchor).view(shape), self.relation(relation).view(shape)], dim=2)
        image = self.input_dropout(self.input_norm(image))
        features = self.feature_dropout(F.relu(self.feature_norm(self.conv(image))))
        hidden = self.hidden(features.flatten(1))
        return F.relu(self.hidden_norm(self.hidden_dropout(hidden)))

    def score_query(self, query: Tensor, candidates: Tensor | slice | None) -> Tensor:
        bias = self.entity_bias if candidates is None else self.entity_bias[candidates]
        return super().score_query(query, candidates) + bias


class TuckER(KGCModel):
    """TuckER (Balažević et al. 2019): score = W ×1 h ×2 r ×3 t with a learnt core tensor W.

    Defaults suit small graphs (UMLS-tuned): ``entity_dim=100, relation_dim=50``, dropouts
    ``input_dropout=0.2, hidden_dropout1=0.2, hidden_dropout2=0.3`` (the paper's FB15k-237 values,
    0.3/0.4/0.5 with 200/200 dims, under-fit UMLS in our runs: 0.87-0.88 vs 0.91 MRR). The core tensor is
    relation_dim x entity_dim x entity_dim; CPU cost is dominated by the per-question
    entity_dim x entity_dim matrix and its dropout, so it grows with entity_dim².
    """

    TRAINING_DEFAULTS = {"epochs": 100, "lr": 0.005, "batch_size": 128, "label_smoothing": 0.1}

    def __init__(self, num_entities: int, num_relations: int, *, entity_dim: int = 100, relation_dim: int = 50,
                 input_dropout: float = 0.2, hidden_dropout1: float = 0.2, hidden_dropout2: float = 0.3) -> None:
        super().__init__(num_entities, num_relations, entity_dim=entity_dim, relation_dim=relation_dim,
                         input_dropout=input_dropout, hidden_dropout1=hidden_dropout1,
                         hidden_dropout2=hidden_dropout2)
        self.entity_dim = entity_dim
        self.entity = _embedding(num_entities, entity_dim)
        self.relation = _embedding(self.num_relation_embeddings, relation_dim)
        self.core = nn.Parameter(torch.empty(relation_dim, entity_dim, entity_dim).uniform_(-1.0, 1.0))
        self.input_norm = nn.BatchNorm1d(entity_dim)
        self.hidden_norm = nn.BatchNorm1d(entity_dim)
        self.input_dropout = nn.Dropout(input_dropout)
        self.hidden_dropout1 = nn.Dropout(hidden_dropout1)
        self.hidden_dropout2 = nn.Dropout(hidden_dropout2)

    def tail_query(self, anchor: Tensor, relation: Tensor) -> Tensor:
        head = self.input_dropout(self.input_norm(self.entity(anchor)))
        # W ×1 r: one (B, d_r) @ (d_r, d_e*d_e) matmul gives a d_e x d_e matrix per question.
        relation_core = (self.relation(relation) @ self.core.view(self.core.shape[0], -1))
        relation_core = self.hidden_dropout1(relation_core.view(-1, self.entity_dim, self.entity_dim))
        hidden = torch.bmm(head.unsqueeze(1), relation_core).squeeze(1)
        return self.hidden_dropout2(self.hidden_norm(hidden))


ARCHITECTURES: dict[str, type[KGCModel]] = {
    "transe": TransE,
    "rotate": RotatE,
    "distmult": DistMult,
    "complex": ComplEx,
    "rescal": RESCAL,
    "conve": ConvE,
    "tucker": TuckER,
}


def architecture_class(name: str) -> type[KGCModel]:
    """The model class registered under ``name`` (case-insensitive)."""
    try:
        return ARCHITECTURES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown architecture {name!r}; choose one of {sorted(ARCHITECTURES)}") from None


def build_model(name: str, num_entities: int, num_relations: int, **hparams: Any) -> KGCModel:
    """Instantiate architecture ``name`` with its defaults overridden by ``hparams``."""
    return architecture_class(name)(num_entities, num_relations, **hparams)
