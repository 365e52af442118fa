"""Writes: consistency flags (issue 8). Answers that contradict each other or the KG are flagged and routed
to the adjudication queue through ``services/adjudication.flag_for_adjudication``.

Flags (strings stored in ``Item.flags``):

- ``single_answer:tail`` / ``single_answer:head``: more than one "yes" in the campaign for a question whose
  relation allows one answer: the tail question (h, r, ?) of a 1-1 / N-1 relation, the head question
  (?, r, t) of a 1-1 / 1-N relation (categories from TRAIN, SPEC 4.1). A "yes" is a judgment Y or a final
  label Y of a (non-gold) item, or a sampled test triple (those are Y by definition; they are not items, so
  only the judged items are flagged).
- ``kg_states:<split>``: a "no" for a triple the KG already states (train / valid / test).
- ``cross_campaign:<campaign>``: the item's answer differs from the final label of the same triple in
  another campaign on the same KG (only this campaign's item is flagged; re-checking the other campaign
  flags its side).

An agreed item that gets a flag becomes a conflict (adjudication queue); an item still being judged keeps
its flag and goes to adjudication when its judgments are in, even if they agree (``submit_judgment``).
Items already adjudicated, rule-labelled, imported or reused keep their status; the flag is recorded.
Gold checks are never checked or flagged.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

import numpy as np
from django.db import connections, router
from django.db.models import Q, QuerySet

from annotation.lib.rules import HEAD, SINGLE_ANSWER, TAIL
from annotation.models import Campaign, Item, Judgment, Label
from annotation.selectors._compiled import compiled, queryset_sql
from annotation.selectors.filtering import kg_categories
from annotation.selectors.labels import FINAL_STATUSES
from annotation.services.adjudication import flag_for_adjudication
from annotation.services.flag_sql import flag_items
from pooling.models import KnowledgeGraph, Relation, SampleTriple, Triple

SINGLE_ANSWER_FLAG = "single_answer"
KG_STATES_FLAG = "kg_states"
CROSS_CAMPAIGN_FLAG = "cross_campaign"
SIDE_NAMES = {HEAD: "head", TAIL: "tail"}


@lru_cache(maxsize=16)
def _relation_categories(kg_id: int, arrays_file: str, created_at: object) -> Mapping[int, str]:
    # A KG's relations and TRAIN split never change after its import (a re-import is a new KG with new arrays),
    # so the map is cached per process: computed once per KG instead of on every answer. The key names one
    # import: a test database may give a later KG the same pk and path after a rollback, never the same time.
    categories = [str(c) for c in kg_categories(KnowledgeGraph.objects.get(pk=kg_id))]
    return MappingProxyType({pk: categories[index] for pk, index in
                             Relation.objects.filter(kg_id=kg_id).values_list("pk", "index") if index < len(categories)})


def relation_categories_by_pk(kg: KnowledgeGraph) -> Mapping[int, str]:
    """Relation pk -> '1-1' / '1-N' / 'N-1' / 'N-N' (TRAIN split); read-only (shared by every caller)."""
    return _relation_categories(kg.pk, kg.arrays_file, kg.created_at)


def single_answer_sides(category: str) -> list[int]:
    """Question sides with a single answer for a relation category: TAIL = (h, r, ?), HEAD = (?, r, t)."""
    return [side for side in (TAIL, HEAD) if category in SINGLE_ANSWER[side]]


@dataclass
class ConsistencyReport:
    judgments: int = 0  # judgments checked
    flagged: dict[int, list[str]] = field(default_factory=dict)  # item pk -> flags found (new or already there)
    new_flags: int = 0

    @property
    def by_kind(self) -> Counter:
        return Counter(flag.split(":", 1)[0] for flags in self.flagged.values() for flag in flags)


def _apply(found: dict[int, set[str]], report: ConsistencyReport) -> None:
    if not found:
        return
    existing = dict(Item.objects.filter(pk__in=list(found)).values_list("pk", "flags"))
    for pk in sorted(found):
        flags = sorted(found[pk])
        report.flagged[pk] = flags
        report.new_flags += sum(1 for flag in flags if flag not in (existing.get(pk) or []))
    if connections[router.db_for_write(Item)].vendor == "postgresql":
        flag_items({pk: report.flagged[pk] for pk in found})  # three plain statements per item (issue 21)
        return
    for pk in sorted(found):
        for flag in report.flagged[pk]:
            flag_for_adjudication(Item(pk=pk), flag)


@dataclass(frozen=True)
class KnownFacts:
    """What the check would read that cannot change while a submit runs, read by the submit's first statement
    (``services/submit_sql``): the KG's splits stating the item's triple (a KG never changes after its import), and
    whether any other campaign on the KG has an item of the triple (items are made with their campaign; a campaign
    made in the milliseconds of one submit holds no final label of the triple yet). Without such an item the
    cross-campaign read finds nothing, so a submit runs no statement after its commit unless a single-answer
    question asks for the other "yes" answers (issue 21: one round trip less per submit)."""

    kg_states: tuple[str, ...]
    shared_elsewhere: bool


def check_judgment(judgment: Judgment, *, item: Item | None = None, campaign: Campaign | None = None,
                   known: KnownFacts | None = None) -> ConsistencyReport:
    """Check one judgment (called by ``submit_judgment`` after its write) and flag what contradicts it.

    ``item`` / ``campaign``: the judged item and its campaign when the caller has them (the submit path does),
    which spares re-reading them; ``known``: what the caller read already (``KnownFacts``)."""
    report = ConsistencyReport(judgments=1)
    if item is None or campaign is None:
        item = Item.objects.select_related("campaign__pool__sample__kg").get(pk=judgment.item_id)
        campaign = item.campaign
    if item.is_gold or judgment.answer not in (Label.YES, Label.NO):
        return report  # a can't tell contradicts nothing (it goes to adjudication anyway)
    kg = campaign.pool.sample.kg
    sides = tuple(single_answer_sides(relation_categories_by_pk(kg).get(item.relation_id, "N-N"))) \
        if judgment.answer == Label.YES else ()
    # what is left to read: everything, or (``known``) the other "yes" answers and other campaigns' labels
    cross = known is None or known.shared_elsewhere
    stated = list(known.kg_states) if known is not None and judgment.answer == Label.NO else []  # a "no" only
    read = {"cross_campaign": [], "kg_states": stated}
    if sides or cross:  # always without ``known`` (cross)
        read.update(_judgment_reads(judgment.answer, sides, item.pk, item.head_id, item.relation_id, item.tail_id,
                                    campaign.pk, campaign.pool.sample_id, kg.pk, kg_states=known is None, cross=cross))
    found: dict[int, set[str]] = defaultdict(set)
    for side in sides:
        yes_items = set(read[f"yes_{side}"])
        if yes_items or read[f"sample_{side}"]:
            flag = f"{SINGLE_ANSWER_FLAG}:{SIDE_NAMES[side]}"
            for pk in (item.pk, *yes_items):
                found[pk].add(flag)
    for split in read.get("kg_states", ()):
        found[item.pk].add(f"{KG_STATES_FLAG}:{split}")
    for name in read["cross_campaign"]:
        found[item.pk].add(f"{CROSS_CAMPAIGN_FLAG}:{name}")
    _apply(found, report)
    return report


def _judgment_reads(answer: str, sides: tuple[int, ...], item_id: int, h: int, r: int, t: int, campaign_id: int,
                    sample_id: int, kg_id: int, *, kg_states: bool = True, cross: bool = True) -> dict[str, list]:
    """What contradicts an answer ``answer`` to the item (h, r, t), by read: ``yes_<side>`` the other "yes"
    items of the single-answer question on that side, ``sample_<side>`` a sampled triple answering it,
    ``kg_states`` the KG's splits stating the triple (a "no"), ``cross_campaign`` the other campaigns whose
    final label of the triple differs. On PostgreSQL in one statement compiled once per process and shape (the
    submit's hot path, issue 21: the ORM's building cost more CPU than the reads); elsewhere one query each."""
    kg_states = kg_states and answer == Label.NO
    # exactly the values the reads use: the compiled statement takes every value as a parameter
    values = dict(h=h, r=r, t=t)
    if sides:
        values.update(item_id=item_id, sample_id=sample_id, campaign_id=campaign_id)
    if kg_states or cross:
        values.update(kg_id=kg_id)
    if cross:
        values.update(campaign_id=campaign_id, answer_value=answer)
    shape = dict(kg_states=kg_states, cross=cross)
    connection = connections[router.db_for_read(Item)]
    if connection.vendor != "postgresql":
        return {name: list(queryset) for name, queryset in _reads(answer, sides, **shape, **values).items()}
    keys = list(values)

    def build(*stand_ins: object) -> tuple[str, list]:
        sql, params = [], []
        for queryset in _reads(answer, sides, **shape, **dict(zip(keys, stand_ins))).values():
            inner, inner_params = queryset_sql(queryset)
            sql.append(f"ARRAY({inner})")
            params += inner_params
        return f"SELECT {', '.join(sql)}", params

    names = _read_names(answer, sides, **shape)  # without building the querysets: that is what compiling spares
    sql, params = compiled(("consistency", connection.alias, answer, sides, kg_states, cross), build, *values.values())
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return dict(zip(names, row))


def _read_names(answer: str, sides: tuple[int, ...], *, kg_states: bool = True, cross: bool = True) -> list[str]:
    """The names of ``_reads``, in its order."""
    names = [name for side in sides for name in (f"yes_{side}", f"sample_{side}")]
    if kg_states and answer == Label.NO:
        names.append("kg_states")
    return [*names, "cross_campaign"] if cross else names


def _reads(answer: str, sides: tuple[int, ...], *, h: int, r: int, t: int, campaign_id: int | None = None,
           kg_id: int | None = None, answer_value: str = "", item_id: int | None = None, sample_id: int | None = None,
           kg_states: bool = True, cross: bool = True) -> dict[str, QuerySet]:
    """``_judgment_reads``'s querysets (one column each, no ordering: each becomes an ARRAY on PostgreSQL)."""
    reads: dict[str, QuerySet] = {}
    for side in sides:
        # Other answers of the same question: tail question (h, r, ?) varies the tail, head question the head.
        same = Q(head_id=h) if side == TAIL else Q(tail_id=t)
        others = Item.objects.filter(same, campaign_id=campaign_id, relation_id=r, is_gold=False).exclude(pk=item_id)
        reads[f"yes_{side}"] = (
            others.filter(Q(label=Label.YES, status__in=FINAL_STATUSES)
                          | Q(judgments__answer=Label.YES, judgments__withdrawn_at__isnull=True))
            .order_by().values_list("pk", flat=True).distinct()
        )
        reads[f"sample_{side}"] = (
            SampleTriple.objects.filter(same, sample_id=sample_id, relation_id=r).exclude(head_id=h, tail_id=t)
            .order_by().values_list("pk", flat=True)[:1]
        )
    if kg_states and answer == Label.NO:
        reads["kg_states"] = (Triple.objects.filter(kg_id=kg_id, head_id=h, relation_id=r, tail_id=t)
                              .order_by().values_list("split", flat=True).distinct())
    if cross:
        reads["cross_campaign"] = (
            Item.objects.filter(campaign__pool__sample__kg_id=kg_id, head_id=h, relation_id=r, tail_id=t,
                                is_gold=False, status__in=FINAL_STATUSES)
            .exclude(campaign_id=campaign_id).exclude(label="").exclude(label=answer_value)
            .order_by().values_list("campaign__name", flat=True).distinct()
        )
    assert list(reads) == _read_names(answer, sides, kg_states=kg_states, cross=cross)
    return reads


def find_campaign_inconsistencies(campaign: Campaign) -> tuple[int, dict[int, set[str]]]:
    """(judgments checked, item pk -> flags) for every human judgment of the campaign, without writing."""
    kg = campaign.pool.sample.kg
    categories = relation_categories_by_pk(kg)
    rows = list(
        Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).values_list(
            "item_id", "item__head_id", "item__relation_id", "item__tail_id", "answer"
        )
    )
    items = Item.objects.filter(campaign=campaign, is_gold=False)
    yes_by_question: dict[tuple[int, int, int], set[int]] = defaultdict(set)  # (side, anchor, relation) -> items
    yes_rows = [(pk, h, r, t) for pk, h, r, t, _a in rows if _a == Label.YES]
    yes_rows += list(items.filter(label=Label.YES, status__in=FINAL_STATUSES).values_list("pk", "head_id", "relation_id", "tail_id"))
    for pk, h, r, t in yes_rows:
        yes_by_question[(TAIL, h, r)].add(pk)
        yes_by_question[(HEAD, t, r)].add(pk)
    sample_answers: dict[tuple[int, int, int], set[tuple[int, int]]] = defaultdict(set)
    for h, r, t in SampleTriple.objects.filter(sample=campaign.pool.sample_id).values_list("head_id", "relation_id", "tail_id"):
        sample_answers[(TAIL, h, r)].add((h, t))
        sample_answers[(HEAD, t, r)].add((h, t))
    found: dict[int, set[str]] = defaultdict(set)
    for pk, h, r, t, answer in rows:
        if answer != Label.YES:
            continue
        for side in single_answer_sides(categories.get(r, "N-N")):
            key = (TAIL, h, r) if side == TAIL else (HEAD, t, r)
            others = yes_by_question[key] - {pk}
            if others or sample_answers[key] - {(h, t)}:
                flag = f"{SINGLE_ANSWER_FLAG}:{SIDE_NAMES[side]}"
                for other in (pk, *others):
                    found[other].add(flag)
    # "no" for a triple the KG states
    no_rows = {(h, r, t): pk for pk, h, r, t, answer in rows if answer == Label.NO}
    if no_rows:
        known = _known_splits(kg)
        for triple, pk in no_rows.items():
            for split in known.get(triple, ()):
                found[pk].add(f"{KG_STATES_FLAG}:{split}")
    # the same triple labelled differently in another campaign on the same KG
    mine: dict[tuple[int, int, int], set[str]] = defaultdict(set)
    item_of: dict[tuple[int, int, int], int] = {}
    for pk, h, r, t, answer in rows:
        mine[(h, r, t)].add(answer)
        item_of[(h, r, t)] = pk
    if mine:
        others = (
            Item.objects.filter(campaign__pool__sample__kg=kg, is_gold=False, status__in=FINAL_STATUSES)
            .exclude(campaign=campaign).exclude(label="")
            .values_list("head_id", "relation_id", "tail_id", "label", "campaign__name")
        )
        for h, r, t, label, name in others.iterator(chunk_size=5000):
            answers = mine.get((h, r, t))
            if answers and answers - {label}:
                found[item_of[(h, r, t)]].add(f"{CROSS_CAMPAIGN_FLAG}:{name}")
    return len(rows), found


def _known_splits(kg: KnowledgeGraph) -> dict[tuple[int, int, int], list[str]]:
    """(head pk, relation pk, tail pk) -> the KG splits stating it."""
    from pooling.models import Entity
    from pooling.selectors.kg import kg_triples

    entity_pk = np.zeros(max(kg.num_entities, 1), dtype=np.int64)
    for index, pk in Entity.objects.filter(kg=kg).values_list("index", "pk"):
        entity_pk[index] = pk
    relation_pk = dict(Relation.objects.filter(kg=kg).values_list("index", "pk"))
    known: dict[tuple[int, int, int], list[str]] = defaultdict(list)
    for split, array in kg_triples(kg).items():
        array = np.asarray(array, dtype=np.int64).reshape(-1, 3)
        for h, r, t in zip(entity_pk[array[:, 0]].tolist(), array[:, 1].tolist(), entity_pk[array[:, 2]].tolist()):
            known[(h, relation_pk[r], t)].append(split)
    return known


def check_campaign(campaign: Campaign) -> ConsistencyReport:
    """Re-check every human judgment of the campaign and flag what contradicts (idempotent)."""
    checked, found = find_campaign_inconsistencies(campaign)
    report = ConsistencyReport(judgments=checked)
    _apply(found, report)
    return report
