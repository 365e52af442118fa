"""Reads: a pool as the arrays the judging orders work on (``annotation.lib.judging_order.PoolView``).

Item i of the view is the pool's i-th entry by primary key; hits without a system (imported pools without
system information) are left out (their entries keep their stored depth); a hit without a rank counts at the
entry's depth.

Issue 18: building the view reads every entry and hit of the pool (1.5 s a request at 76,583 entries), so
``pool_view`` keeps its arrays in a file per pool version under ``STORAGE_DIR/pool-views/`` (written on first
use, like ``pooling.selectors.kg_stats``). The version is named by what changes when the pool does: its
``updated_at`` (``pooling.services.pools.write_entries``, the only writer of entries and hits in bulk, touches
it, and so does a save on the admin's entry page), the count and the largest primary key of
its entries (deletes and inserts by any path; primary keys are never reused), the largest primary key of all
hits (a hit added by any path; one index look-up), its systems in view order, and the KG statistics file the
features come from (the sample's questions never change). An index-only count and three short queries per
request instead of the two reads.
"""
from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.db.models import Count, Max

from annotation.lib.cal_order import features_from_counts
from annotation.lib.judging_order import PoolView
from pooling.engine.questions import TAIL
from pooling.models import Pool, PoolEntry, PoolHit
from pooling.selectors.kg_stats import _cache_folder as kg_stats_folder
from pooling.selectors.kg_stats import kg_stats
from pooling.selectors.pools import sample_questions
from pooling.storage import storage_path

VERSION = 1

CATEGORY_CODES = {"1-1": 0, "1-N": 1, "N-1": 2, "N-N": 3}


@dataclass(frozen=True)
class PoolIndex:
    """What the view's integer ids stand for."""

    entry_pks: np.ndarray  # item index -> PoolEntry pk (ascending)
    triples: np.ndarray  # (n, 3) head, relation, tail indices of each item
    system_pks: list[int]
    system_names: list[str]
    system_architectures: list[str]
    qids: list[str]

    def items_of(self, entry_pks: np.ndarray) -> np.ndarray:
        """Item indices of the given entry pks (-1 where not in the pool)."""
        entry_pks = np.asarray(entry_pks, dtype=np.int64)
        if not self.entry_pks.size:
            return np.full(entry_pks.shape, -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self.entry_pks, entry_pks), self.entry_pks.size - 1)
        return np.where(self.entry_pks[position] == entry_pks, position, -1)


def pool_view(pool: Pool) -> tuple[PoolView, PoolIndex]:
    """The pool's view and index, from the cached file of the pool's current version (built and written when
    missing or unreadable)."""
    updated_at = Pool.objects.filter(pk=pool.pk).values_list("updated_at", flat=True).first()
    count_max = PoolEntry.objects.filter(pool=pool).aggregate(n=Count("*"), last=Max("pk"))
    last_hit = PoolHit.objects.aggregate(last=Max("pk"))["last"]
    systems = list(pool.systems.order_by("name").values_list("pk", "name", "architecture"))
    key = repr((VERSION, pool.pk, updated_at and updated_at.isoformat(), count_max["n"], count_max["last"], last_hit,
                [s[0] for s in systems], kg_stats_folder(pool.sample.kg)))
    path = storage_path(f"pool-views/{pool.pk}/{hashlib.sha256(key.encode()).hexdigest()[:32]}.npz")
    if path.exists():
        try:
            return _loaded(path, systems)
        except (OSError, ValueError, KeyError):
            pass  # unreadable: rebuild and rewrite
    view, index = build_pool_view(pool)
    _save(path, view, index)
    return view, index


_VIEW_ARRAYS = ("hit_item", "hit_system", "hit_question", "hit_rank", "depth", "question_relation", "question_group",
                "question_known", "item_candidate", "item_features")


def _save(path: Path, view: PoolView, index: PoolIndex) -> None:
    arrays = {name: getattr(view, name) for name in _VIEW_ARRAYS if getattr(view, name) is not None}
    arrays.update(num_items=np.int64(view.num_items), num_systems=np.int64(view.num_systems),
                  num_questions=np.int64(view.num_questions), entry_pks=index.entry_pks, triples=index.triples,
                  qids=np.array(index.qids, dtype=str))
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob("*.npz"):  # earlier versions of this pool
        stale.unlink(missing_ok=True)
    folder = Path(tempfile.mkdtemp(dir=path.parent, prefix=".part"))
    try:
        np.savez(folder / "view.npz", **arrays)
        (folder / "view.npz").replace(path)  # atomic: readers see the whole file or none
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _loaded(path: Path, systems: list[tuple]) -> tuple[PoolView, PoolIndex]:
    with np.load(path, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    view = PoolView(int(arrays["num_items"]), int(arrays["num_systems"]), int(arrays["num_questions"]),
                    **{name: arrays.get(name) for name in _VIEW_ARRAYS})
    index = PoolIndex(arrays["entry_pks"], arrays["triples"], [s[0] for s in systems], [s[1] for s in systems],
                      [s[2] or s[1] for s in systems], arrays["qids"].tolist())
    return view, index


def build_pool_view(pool: Pool) -> tuple[PoolView, PoolIndex]:
    """The view and index read from the database (every entry and hit of the pool)."""
    kg = pool.sample.kg
    entries = np.array(list(PoolEntry.objects.filter(pool=pool).order_by("pk").values_list(
        "pk", "head__index", "relation__index", "tail__index", "depth")), dtype=object).reshape(-1, 5)
    entry_pks = entries[:, 0].astype(np.int64)
    triples = entries[:, 1:4].astype(np.int64)
    depth = np.array([pool.depth if d is None else d for d in entries[:, 4]], dtype=np.int64)
    systems = list(pool.systems.order_by("name").values_list("pk", "name", "architecture"))
    system_index = {pk: i for i, (pk, _name, _arch) in enumerate(systems)}
    sq = sample_questions(pool.sample)
    question_index = {int(pk): i for i, pk in enumerate(sq.pks)}
    rows = np.array(list(PoolHit.objects.filter(entry__pool=pool, system__isnull=False).values_list(
        "entry_id", "system_id", "question_id", "rank")), dtype=object).reshape(-1, 4)
    index = PoolIndex(entry_pks, triples, [s[0] for s in systems], [s[1] for s in systems],
                      [s[2] or s[1] for s in systems], sq.qids)
    items = index.items_of(rows[:, 0].astype(np.int64))
    keep = items >= 0
    hit_rank = np.array([depth[i] if r is None else r for i, r in zip(items, rows[:, 3])], dtype=np.int64)
    hit_system = np.array([system_index.get(s, -1) for s in rows[:, 1]], dtype=np.int64)
    hit_question = np.array([question_index.get(q, -1) for q in rows[:, 2]], dtype=np.int64)
    keep &= (hit_system >= 0) & (hit_question >= 0)
    questions = sq.questions
    stats = kg_stats(kg)  # the KG's counts, computed once per KG (not per page view: seconds on 5M triples)
    categories = [CATEGORY_CODES.get(str(c), 3) for c in stats.categories()]
    group = np.array(categories, dtype=np.int64)[questions.relation] * 2 + questions.side.astype(np.int64) \
        if len(questions) else np.zeros(0, dtype=np.int64)
    known = stats.known_answer_counts(questions)
    view = PoolView.build(len(entry_pks), items[keep], hit_system[keep], hit_question[keep], hit_rank[keep],
                          num_systems=len(systems), num_questions=len(questions), depth=depth,
                          question_relation=questions.relation, question_group=group, question_known=known)
    # the candidate entity of each item (the side its best-ranked question asks for) and its KG features (cal)
    if len(questions) and len(entry_pks):
        asks_tail = questions.side[view.item_question] == TAIL
    else:
        asks_tail = np.ones(len(entry_pks), dtype=bool)
    candidate = np.where(asks_tail, triples[:, 2], triples[:, 0]) if len(entry_pks) else np.zeros(0, np.int64)
    features = features_from_counts(stats.degree[candidate],
                                    stats.train_role_count(triples[:, 1], asks_tail.astype(np.int64), candidate),
                                    stats.relation_size[triples[:, 1]])
    view = dataclasses.replace(view, item_candidate=candidate, item_features=features)
    return view, index
