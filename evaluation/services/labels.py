"""Label sets of a sample (SPEC 2, 5): sparse, completed and completed at pool depth d.

Torch-free. A *label source* gives the judged triples of a KG (positives and negatives); today that is a judgments
file ``h<TAB>r<TAB>t<TAB>Y|N`` (:class:`JudgmentsFile`) or a judging campaign's final labels: anything with a
``judged_triples(kg) -> JudgedTriples`` method plugs in (:class:`LabelSource`); :class:`CampaignLabels` reads a
judging campaign's final labels (gold checks excluded) and brings the campaign's pool for the depths.

A :class:`LabelSet` holds one label per triple and, for each, its depth: 0 for a sampled (original test) triple,
d >= 1 for a pool entry of depth d, -1 when the depth is unknown (a judged triple that is not an entry of the pool
used, or no pool given). Conventions:

- *sparse* = the sampled triples, all positive, depth 0;
- *completed* = sparse + every judged triple that answers one of the sample's questions; a judgment of a sampled
  triple overrides its positive label (the published FB15k-237 campaign confirmed all 1,023 as Y);
- *completed at depth d* = the labels of depth 0..d (unknown depths are left out), so completed at the pool's
  depth equals completed when every judged triple is a pool entry, and completed at 0 is sparse (unless the
  judgments relabelled a sampled triple).
Judged triples that answer none of the sample's questions are ignored (counted in ``JudgedTriples.stats``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pooling.engine.questions import HEAD, TAIL, Questions, Ragged, known_answers
from pooling.models import KnowledgeGraph, Pool, Sample

POSITIVE_WORDS = {"y": True, "yes": True, "1": True, "true": True, "n": False, "no": False, "0": False, "false": False}


class LabelError(ValueError):
    """A label file or source was refused; the message names the file and line."""


@dataclass(frozen=True)
class JudgedTriples:
    """Judged triples of a KG as index arrays: ``triples`` (n, 3) int64 unique, ``positive`` (n,) bool."""

    triples: np.ndarray
    positive: np.ndarray
    source: str = ""


class LabelSource(Protocol):
    """Anything that yields the final labels of judged triples of a KG (a file, a campaign...)."""

    def judged_triples(self, kg: KnowledgeGraph) -> JudgedTriples: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class JudgmentsFile:
    """Labels read from ``h<TAB>r<TAB>t<TAB>Y|N`` (keys of the KG; Y/N, yes/no, 1/0 accepted; ``#`` comments)."""

    path: Path

    def describe(self) -> str:
        return str(Path(self.path))

    def judged_triples(self, kg: KnowledgeGraph) -> JudgedTriples:
        from pooling.selectors.kg import kg_relation_keys
        from pooling.selectors.pools import entity_indices_of_keys

        from pooling.engine import userfiles

        path = Path(self.path)
        try:  # a regular file (a FIFO would block), bounded lines
            text = userfiles.read_text(path, universal_newlines=True)
        except userfiles.UserFileError as exc:
            raise LabelError(f"{exc.where}: cannot read file: {exc.message}") from None
        lines = text.splitlines()
        named = [f.strip() for raw in lines for f in (raw.split("\t") if "\t" in raw else raw.split())[0:3:2]]
        entities = entity_indices_of_keys(kg, named)  # only the file's entities, not the KG's millions
        relations = {key: index for index, key in enumerate(kg_relation_keys(kg))}
        rows: list[tuple[int, int, int]] = []
        labels: list[bool] = []
        seen: dict[tuple[int, int, int], tuple[int, bool]] = {}
        for number, raw in enumerate(lines, start=1):
            fields = raw.split("\t") if "\t" in raw else raw.split()
            fields = [f.strip() for f in fields]
            if not fields or not fields[0] or fields[0].startswith("#"):
                continue
            if len(fields) != 4:
                raise LabelError(f"{path}:{number}: expected `h r t Y|N`, got {len(fields)} fields")
            h_key, r_key, t_key, word = fields
            label = POSITIVE_WORDS.get(word.lower())
            if label is None:
                raise LabelError(f"{path}:{number}: label {word!r} is not Y or N")
            for key, table, what in ((h_key, entities, "entity"), (r_key, relations, "relation"),
                                     (t_key, entities, "entity")):
                if key not in table:
                    raise LabelError(f"{path}:{number}: unknown {what} {key!r} in {kg.name}")
            triple = (entities[h_key], relations[r_key], entities[t_key])
            if triple in seen:
                first, first_label = seen[triple]
                if first_label != label:
                    raise LabelError(f"{path}:{number}: ({h_key}, {r_key}, {t_key}) is labelled both ways "
                                     f"(first on line {first})")
                continue
            seen[triple] = (number, label)
            rows.append(triple)
            labels.append(label)
        if not rows:
            raise LabelError(f"{path}: no judgments")
        return JudgedTriples(np.array(rows, dtype=np.int64).reshape(-1, 3), np.array(labels, dtype=bool), str(path))


@dataclass(frozen=True)
class LabelSet:
    """Per-triple labels of a sample: ``triples`` (n, 3), ``positive`` (n,) bool, ``depth`` (n,) int64."""

    name: str
    triples: np.ndarray
    positive: np.ndarray
    depth: np.ndarray
    stats: dict = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return int(len(self.triples))

    @property
    def num_positive(self) -> int:
        return int(self.positive.sum())

    @property
    def num_negative(self) -> int:
        return int((~self.positive).sum())

    @property
    def max_depth(self) -> int:
        return int(self.depth.max(initial=0))

    def at_depth(self, depth: int) -> "LabelSet":
        """The labels of depth 0..``depth`` (unknown depths left out)."""
        keep = (self.depth >= 0) & (self.depth <= depth)
        return LabelSet(f"completed@{depth}", self.triples[keep], self.positive[keep], self.depth[keep])

    def digest(self) -> str:
        digest = hashlib.sha1()
        for array in (self.triples, self.positive, self.depth):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def answers(self, questions: Questions) -> tuple[Ragged, Ragged]:
        """(positive answers, negative answers) of each question (sorted, unique)."""
        return known_answers(questions, self.triples[self.positive]), known_answers(questions, self.triples[~self.positive])


def _keys(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * num_relations + triples[:, 1]) * num_entities + triples[:, 2]


def answers_sample_question(triples: np.ndarray, questions: Questions, num_entities: int, num_relations: int) -> np.ndarray:
    """For each triple, whether its head question (?, r, t) or its tail question (h, r, ?) is one of ``questions``."""
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    question_keys = np.sort(questions.keys(num_entities, num_relations))
    if question_keys.size == 0 or len(triples) == 0:
        return np.zeros(len(triples), dtype=bool)
    found = np.zeros(len(triples), dtype=bool)
    for side, anchor in ((HEAD, triples[:, 2]), (TAIL, triples[:, 0])):
        keys = (np.int64(side) * num_relations + triples[:, 1]) * num_entities + anchor
        position = np.minimum(np.searchsorted(question_keys, keys), question_keys.size - 1)
        found |= question_keys[position] == keys
    return found


def sparse_label_set(sample: Sample) -> LabelSet:
    from pooling.selectors.pools import sample_triples

    triples = sample_triples(sample)
    return LabelSet("sparse", triples, np.ones(len(triples), dtype=bool), np.zeros(len(triples), dtype=np.int64),
                    stats={"sampled": len(triples)})


def default_pool(sample: Sample) -> Pool | None:
    """The sample's pool when it has exactly one finished pool (else None: pass one explicitly)."""
    pools = list(Pool.objects.filter(sample=sample, status=Pool.Status.DONE)[:2])
    return pools[0] if len(pools) == 1 else None


def completed_label_set(sample: Sample, judged: JudgedTriples, pool: Pool | None = None) -> LabelSet:
    """Sparse + the judged triples answering a sample question, with their pool depth (see the module doc)."""
    from pooling.selectors.pools import pool_entry_array, sample_questions

    kg = sample.kg
    num_e, num_r = max(kg.num_entities, 1), max(kg.num_relations, 1)
    sparse = sparse_label_set(sample)
    sq = sample_questions(sample)
    relevant = answers_sample_question(judged.triples, sq.questions, num_e, num_r)
    triples, positive = judged.triples[relevant], judged.positive[relevant]
    depth = np.full(len(triples), -1, dtype=np.int64)
    if pool is not None:
        entries = pool_entry_array(pool)
        if len(entries):
            entry_keys = _keys(entries[:, :3], num_e, num_r)
            order = np.argsort(entry_keys)
            entry_keys, entry_depth = entry_keys[order], entries[order, 3]
            keys = _keys(triples, num_e, num_r)
            position = np.minimum(np.searchsorted(entry_keys, keys), entry_keys.size - 1)
            hit = entry_keys[position] == keys
            depth[hit] = entry_depth[position[hit]]
    # sampled triples: depth 0; a judgment of a sampled triple overrides its label
    sparse_keys = _keys(sparse.triples, num_e, num_r)
    judged_keys = _keys(triples, num_e, num_r)
    is_sampled = np.isin(judged_keys, sparse_keys)
    depth[is_sampled] = 0
    extra = ~np.isin(sparse_keys, judged_keys)
    all_triples = np.concatenate([sparse.triples[extra], triples])
    all_positive = np.concatenate([sparse.positive[extra], positive])
    all_depth = np.concatenate([sparse.depth[extra], depth])
    order = np.argsort(_keys(all_triples, num_e, num_r), kind="stable")
    stats = {
        "judged": int(len(judged.triples)),
        "judged_used": int(relevant.sum()),
        "judged_ignored": int((~relevant).sum()),
        "judged_sampled": int(is_sampled.sum()),
        "relabelled_negative": int((is_sampled & ~positive).sum()),
        "unknown_depth": int(((depth < 0)).sum()),
        "pool": pool.name if pool is not None else "",
        "source": judged.source,
    }
    return LabelSet("completed", all_triples[order], all_positive[order], all_depth[order], stats=stats)


def label_sets(sample: Sample, source: LabelSource | None, pool: Pool | None = None,
               depths: list[int] | None = None) -> dict[str, LabelSet]:
    """sparse, completed and completed@d for d in ``depths`` (default 0..pool depth when a pool gives depths)."""
    result = {"sparse": sparse_label_set(sample)}
    if source is None:
        return result
    completed = completed_label_set(sample, source.judged_triples(sample.kg), pool)
    result["completed"] = completed
    if depths is None:
        depths = list(range(0, (pool.depth if pool is not None else 0) + 1)) if pool is not None else []
    for depth in depths:
        result[f"completed@{depth}"] = completed.at_depth(depth)
    return result


class CampaignLabels:
    """The final labels of a judging campaign (annotation app) as a :class:`LabelSource`.

    Reads ``annotation.selectors.labels.completed_labels``: the sample's test triples (Y) plus every non-gold item
    with a final label (agreed, adjudicated, automatic negative, imported). Gold checks (``Item.is_gold``) never
    count, undecided items (pending, in progress, conflict) are left out. The campaign's pool gives the depths.
    """

    def __init__(self, campaign: Any) -> None:
        self.campaign = campaign

    @property
    def pool(self) -> Pool:
        return self.campaign.pool

    def describe(self) -> str:
        return f"campaign {self.campaign.name}"

    def judged_triples(self, kg: KnowledgeGraph) -> JudgedTriples:
        from annotation.selectors.labels import completed_labels
        from pooling.selectors.kg import kg_relation_keys
        from pooling.selectors.pools import entity_indices_of_keys

        if self.campaign.pool.sample.kg_id != kg.pk:
            raise LabelError(f"campaign {self.campaign.name} judges a pool of {self.campaign.pool.sample.kg.name}, "
                             f"not of {kg.name}")
        labelled = completed_labels(self.campaign)
        entities = entity_indices_of_keys(kg, [key for x in labelled for key in (x.head, x.tail)])
        relations = {key: index for index, key in enumerate(kg_relation_keys(kg))}
        rows = [(entities[x.head], relations[x.relation], entities[x.tail], x.label == "Y") for x in labelled]
        if not rows:
            return JudgedTriples(np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=bool), self.describe())
        array = np.array(rows, dtype=np.int64)
        return JudgedTriples(array[:, :3].copy(), array[:, 3].astype(bool), self.describe())


def campaign_by_name(name: str) -> Any:
    """The campaign called ``name``; LabelError naming the known campaigns otherwise."""
    from annotation.models import Campaign

    campaign = Campaign.objects.select_related("pool__sample__kg").filter(name=name).first()
    if campaign is None:
        known = ", ".join(Campaign.objects.values_list("name", flat=True)[:20]) or "none"
        raise LabelError(f"no campaign named {name!r} (known: {known})")
    return campaign


def check_campaign_sample(campaign: Any, sample: Sample) -> None:
    """A campaign's labels evaluate the sample its pool was built on (the pool gives the depths)."""
    if campaign.pool.sample_id != sample.pk:
        raise LabelError(f"campaign {campaign.name} judges pool {campaign.pool.name} of sample "
                         f"{campaign.pool.sample.name}, not sample {sample.name}")
