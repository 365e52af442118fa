"""Helpers of the evaluation app's tests: a tiny UMLS campaign and brute-force reference computations."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests._pool_support import import_umls, train_tiny


@dataclass
class Campaign:
    kg: object
    sample: object
    pool: object
    systems: list
    judgments: Path
    judged: dict  # (h, r, t) index triple -> bool


def build_campaign(tmp_path: Path, *, size: int = 30, depth: int = 3, seed: int = 0,
                   architectures: tuple[str, ...] = ("distmult", "transe", "complex")) -> Campaign:
    """UMLS, tiny trained systems, a sample, a depth-``depth`` pool and a synthetic judgments file.

    Judgments: every sampled triple Y, every pool entry Y with probability 0.3 (seeded), plus one judged triple
    that answers no sampled question (must be ignored).
    """
    from pooling.selectors.pools import entity_keys, pool_entry_array, sample_triples
    from pooling.selectors.kg import kg_relation_keys, kg_triples
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, arch, epochs=3, seed=i) for i, arch in enumerate(architectures)]
    sample = draw_sample(kg, size=size, seed=seed)
    pool = build_pool_now(create_pool(sample, systems, depth=depth, chunk_size=64))
    rng = np.random.default_rng(seed)
    judged: dict[tuple[int, int, int], bool] = {}
    for h, r, t in sample_triples(sample).tolist():
        judged[(h, r, t)] = True
    for h, r, t, _d in pool_entry_array(pool).tolist():
        judged[(h, r, t)] = bool(rng.random() < 0.3)
    # a triple answering no sampled question (and not known)
    arrays = kg_triples(kg)
    known = {tuple(x) for split in arrays.values() for x in split.tolist()}
    sampled = sample_triples(sample)
    heads = {(r, t) for h, r, t in sampled.tolist()}
    tails = {(h, r) for h, r, t in sampled.tolist()}
    for h in range(kg.num_entities):
        r, t = 0, (h + 7) % kg.num_entities
        if (h, r, t) not in known and (r, t) not in heads and (h, r) not in tails:
            judged[(h, r, t)] = True
            break
    entities, relations = entity_keys(kg), kg_relation_keys(kg)
    path = tmp_path / "judgments.tsv"
    path.write_text("".join(f"{entities[h]}\t{relations[r]}\t{entities[t]}\t{'Y' if y else 'N'}\n"
                            for (h, r, t), y in judged.items()), encoding="utf-8")
    return Campaign(kg, sample, pool, systems, path, judged)


def full_scores(system, questions) -> np.ndarray:
    """(Q, E) float32 scores of a trained system, straight from the model (no ranking engine)."""
    import torch

    from pooling.services.systems import load_system_model

    model = load_system_model(system, device="cpu")
    model.eval()
    rows = np.zeros((len(questions), system.kg.num_entities), dtype=np.float32)
    with torch.no_grad():
        for side in (0, 1):
            index = np.flatnonzero(questions.side == side)
            if index.size:
                out = model.score_questions(torch.from_numpy(questions.anchor[index]),
                                            torch.from_numpy(questions.relation[index]), side).float()
                rows[index] = out.numpy()
    return rows


def brute_rank(scores: np.ndarray, answer: int, excluded: set[int]) -> float:
    """Realistic filtered rank of ``answer`` among all entities not in ``excluded`` (answer always competes)."""
    mask = np.ones(scores.size, dtype=bool)
    mask[list(excluded)] = False
    mask[answer] = True
    s = scores[answer]
    others = scores[mask]
    greater = int((others > s).sum())
    ties = int((others == s).sum()) - 1
    return 1.0 + greater + ties / 2.0


def answers_of(triples, side: int, relation: int, anchor: int) -> set[int]:
    """Answers of the question within ``triples`` (iterable of (h, r, t))."""
    if side == 0:
        return {h for h, r, t in triples if r == relation and t == anchor}
    return {t for h, r, t in triples if r == relation and h == anchor}


def judged_campaign(data: Campaign, name: str = "judged"):
    """A judging campaign over ``data.pool`` with every item decided from ``data.judged`` (no gold checks)."""
    from annotation.models import Item
    from annotation.services.campaigns import create_campaign
    from pooling.models import Entity, Relation

    campaign = create_campaign(name, data.pool, gold_rate=0.0, reuse=False)
    entity_index = dict(Entity.objects.filter(kg=data.kg).values_list("pk", "index"))
    relation_index = dict(Relation.objects.filter(kg=data.kg).values_list("pk", "index"))
    items = list(Item.objects.filter(campaign=campaign))
    for item in items:
        triple = (entity_index[item.head_id], relation_index[item.relation_id], entity_index[item.tail_id])
        item.status, item.label_origin = Item.Status.AGREED, Item.Origin.UNANIMOUS
        item.label = "Y" if data.judged[triple] else "N"
    Item.objects.bulk_update(items, ["status", "label", "label_origin"])
    return campaign


def exported_questions(campaign, path: Path):
    """The campaign's ``questions`` export written to ``path``, read back as (qids, Questions) of the KG."""
    import io

    from annotation.services.exports import export_judgments
    from pooling.engine.questions import Questions
    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys

    out = io.StringIO()
    export_judgments(campaign, "questions", out)
    path.write_text(out.getvalue(), encoding="utf-8")
    kg = campaign.pool.sample.kg
    entities = {key: index for index, key in enumerate(entity_keys(kg))}
    relations = {key: index for index, key in enumerate(kg_relation_keys(kg))}
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    qids = [qid for qid, _e, _r in rows]
    questions = Questions(np.array([entities[e] for _q, e, _r in rows]), np.array([relations[r] for _q, _e, r in rows]),
                          np.array([0 if qid.startswith("head") else 1 for qid in qids]))
    return qids, questions


def write_run(path: Path, qids: list[str], scores: np.ndarray, entity_names: list[str], depth: int | None = None,
              keep=None) -> None:
    """A TREC run of ``scores`` (rows = ``qids``): each question's entities by descending score, cut at ``depth``
    (or at ``keep(row, order)`` entries), scores written exactly (repr of the float32 value)."""
    with open(path, "w", encoding="utf-8") as stream:
        for row, qid in enumerate(qids):
            order = np.argsort(-scores[row], kind="stable")
            cut = len(order) if depth is None and keep is None else (depth if keep is None else keep(row, order))
            stream.write("".join(f"{qid} Q0 {entity_names[e]} {rank} {float(scores[row, e])!r} run\n"
                                 for rank, e in enumerate(order[:cut].tolist(), start=1)))
