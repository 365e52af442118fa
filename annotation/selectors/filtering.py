"""Reads: what the trivial filter (SPEC 4.1) would label, per rule and relation, without writing; and how often
each rule would be wrong on the labelled triples at hand (``selectors.reference_labels``)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from annotation.lib.rules import HEAD, TAIL, cardinality_rule, parse_rules, reflexive_rule
from annotation.lib.type_rule import (
    TypeModel,
    TypeOptions,
    type_rule,
    types_from_entity_data,
    types_from_relation_signatures,
    types_from_roles,
)
from annotation.models import Label
from annotation.selectors.reference_labels import ReferenceLabels
from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, PoolHit, Question, Relation
from pooling.selectors.kg import kg_triples


@dataclass(frozen=True)
class PoolQuestions:
    """The pool's entries and, as (entry row, side) pairs, the questions each entry answers."""

    pks: np.ndarray  # PoolEntry pks, row order
    triples: np.ndarray  # int64 (n, 3) index triples
    entry_of: np.ndarray  # int64 (m,) entry row of each pair
    sides: np.ndarray  # int64 (m,) HEAD / TAIL
    from_hits: int  # entries whose questions came from their PoolHits (the rest matched the sample's questions)


def pool_questions(pool: Pool) -> PoolQuestions:
    """Which questions each entry answers: the questions of its PoolHits (the questions that actually retrieved
    it); an entry without hits (imported pools) answers every question of the sample it matches: the tail
    question (head, r, ?) and the head question (?, r, tail)."""
    rows = list(
        PoolEntry.objects.filter(pool=pool)
        .order_by("pk")
        .values_list("pk", "head__index", "relation__index", "tail__index", "head_id", "relation_id", "tail_id")
    )
    pks = np.array([row[0] for row in rows], dtype=np.int64)
    triples = np.array([row[1:4] for row in rows], dtype=np.int64).reshape(-1, 3)
    row_of = {pk: i for i, pk in enumerate(pks.tolist())}
    pairs: set[tuple[int, int]] = set()
    hit_rows: set[int] = set()
    for entry_id, side in PoolHit.objects.filter(entry__pool=pool).values_list("entry_id", "question__side").distinct():
        pairs.add((row_of[entry_id], int(side)))
        hit_rows.add(row_of[entry_id])
    questions = set(Question.objects.filter(sample=pool.sample_id).values_list("side", "anchor_id", "relation_id"))
    for i, row in enumerate(rows):
        if i in hit_rows:
            continue
        _pk, _h, _r, _t, head_id, relation_id, tail_id = row
        if (TAIL, head_id, relation_id) in questions:
            pairs.add((i, TAIL))
        if (HEAD, tail_id, relation_id) in questions:
            pairs.add((i, HEAD))
    ordered = sorted(pairs)
    entry_of = np.array([p[0] for p in ordered], dtype=np.int64)
    sides = np.array([p[1] for p in ordered], dtype=np.int64)
    return PoolQuestions(pks, triples, entry_of, sides, len(hit_rows))


def kg_categories(kg: KnowledgeGraph, threshold: float = 1.5) -> np.ndarray:
    """Relation index -> '1-1' / '1-N' / 'N-1' / 'N-N' from the TRAIN split."""
    from pooling.selectors.kg_stats import kg_stats

    return kg_stats(kg).categories(threshold)  # computed once per KG (seconds on millions of triples)


def kg_type_model(kg: KnowledgeGraph, options: TypeOptions = TypeOptions()) -> TypeModel | None:
    """The type rule's model for ``kg``: the dataset's entity types when it has them (CoDEx), else its relation
    domain/range types with the entity types they imply in train (FB15k-237), else None (no type rule) unless
    ``options.source`` is ``roles`` (role types, on any KG)."""
    train = kg_triples(kg)["train"]
    num_relations = max(kg.num_relations, Relation.objects.filter(kg=kg).count())
    if options.source == "roles":
        return types_from_roles(train, kg.num_entities, num_relations, options)
    domain = [""] * num_relations
    range_ = [""] * num_relations
    for index, d, r in Relation.objects.filter(kg=kg).values_list("index", "domain_type", "range_type"):
        domain[index], range_[index] = (d or "").strip(), (r or "").strip()
    has_signatures = any(domain) or any(range_)
    entity_rows = list(Entity.objects.filter(kg=kg).exclude(types=[]).values_list("index", "types"))
    if entity_rows:
        types: list[list[str]] = [[] for _ in range(kg.num_entities)]
        for index, values in entity_rows:
            types[index] = [str(v) for v in values]
        return types_from_entity_data(
            train, types, num_relations, domain if has_signatures else None, range_ if has_signatures else None, options
        )
    if has_signatures:
        return types_from_relation_signatures(train, kg.num_entities, domain, range_, options)
    return None


NO_TYPES = "none: the KG has no type data (the type rule can use role types if asked: type source 'roles')"


@dataclass(frozen=True)
class RulePrecision:
    """A rule's record against the labelled triples at hand: of the candidates it would reject, how many are
    labelled, and how many of those are negatives (the rule was right) or positives (it would be wrong)."""

    rule: str
    rejected: int
    labelled: int
    negatives: int
    positives: list[tuple[int, tuple[int, int, int]]]  # (PoolEntry pk, index triple) of each labelled-Y one

    @property
    def precision(self) -> float | None:
        return self.negatives / self.labelled if self.labelled else None


@dataclass
class FilterReport:
    """Counts of a filter run (preview or apply)."""

    rules: tuple[str, ...]
    entries: int
    fired: dict[int, tuple[str, ...]]  # PoolEntry pk -> rules that fired
    by_rule: Counter = field(default_factory=Counter)
    by_relation: dict[str, Counter] = field(default_factory=dict)  # relation key -> rule -> count ("any" too)
    type_source: str = ""
    applied: int = 0  # items labelled (apply only)
    kept: int = 0  # entries a rule fired on but whose item was already in human hands (apply only)
    extended: int = 0  # automatic negatives already there that another rule now also covers (apply only)
    reference: str = ""  # the labelled triples the precision is measured on
    precision: dict[str, RulePrecision] = field(default_factory=dict)  # rule ("any" too) -> its record

    @property
    def labelled(self) -> int:
        return len(self.fired)


def filter_preview(
    pool: Pool, rules=None, *, threshold: float = 1.5, type_options: TypeOptions = TypeOptions(),
    reference: ReferenceLabels | None = None,
) -> FilterReport:
    """Run the rules on the pool's entries and count, per rule and per relation, what they would label N; with
    ``reference`` labels, each rule's precision on the labelled ones."""
    rules = parse_rules(rules)
    kg = pool.sample.kg
    pq = pool_questions(pool)
    masks: dict[str, np.ndarray] = {}
    type_source = ""
    if "type" in rules:
        model = kg_type_model(kg, type_options)
        masks["type"] = type_rule(pq.triples, model)
        type_source = model.source if model is not None else NO_TYPES
    if "cardinality" in rules:
        masks["cardinality"] = cardinality_rule(pq.triples, pq.entry_of, pq.sides, kg_categories(kg, threshold))
    if "reflexive" in rules:
        masks["reflexive"] = reflexive_rule(pq.triples, kg_triples(kg)["train"], kg.num_relations)
    keys = dict(Relation.objects.filter(kg=kg).values_list("index", "key"))
    report = FilterReport(rules=rules, entries=len(pq.pks), fired={}, type_source=type_source)
    for row, pk in enumerate(pq.pks.tolist()):
        names = tuple(rule for rule in rules if masks[rule][row])
        if not names:
            continue
        report.fired[pk] = names
        counter = report.by_relation.setdefault(keys[int(pq.triples[row, 1])], Counter())
        for name in names:
            report.by_rule[name] += 1
            counter[name] += 1
        counter["any"] += 1
    report.by_rule["any"] = len(report.fired)
    if reference is not None:
        masks["any"] = np.logical_or.reduce([masks[rule] for rule in rules]) if rules else np.zeros(len(pq.pks), bool)
        report.reference = reference.description
        report.precision = {rule: _precision(rule, masks[rule], pq, reference) for rule in (*rules, "any")}
    return report


def _precision(rule: str, mask: np.ndarray, pq: PoolQuestions, reference: ReferenceLabels) -> RulePrecision:
    rows = np.flatnonzero(mask)
    labelled = negatives = 0
    positives = []
    for pk, triple in zip(pq.pks[rows].tolist(), map(tuple, pq.triples[rows].tolist())):
        label = reference.labels.get(triple)
        if label is None:
            continue
        labelled += 1
        if label == Label.NO:
            negatives += 1
        else:
            positives.append((pk, triple))
    return RulePrecision(rule, len(rows), labelled, negatives, positives)
