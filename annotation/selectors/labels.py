"""Reads: the completed label set of a campaign and the provenance of every label (for exports, evaluation)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from annotation.models import Adjudication, Campaign, Item, Judgment, Label, LabelVersion
from pooling.engine.questions import HEAD, TAIL
from pooling.models import PoolHit, Question, Relation, SampleTriple
from pooling.selectors.kg import kg_relation_keys
from pooling.selectors.pools import (
    entity_fields_of_pks, entity_indices_of_keys, entity_keys_of_indices, sample_questions,
)
from pooling.selectors.questions import completion_questions

FINAL_STATUSES = (Item.Status.AUTO_NEGATIVE, Item.Status.AGREED, Item.Status.ADJUDICATED, Item.Status.IMPORTED)


@dataclass(frozen=True)
class LabelledTriple:
    head: str  # entity key
    relation: str  # relation key
    tail: str
    label: str  # "Y" / "N"


def completed_labels(campaign: Campaign) -> list[LabelledTriple]:
    """The completed set: the sample's test triples (Y, the sparse labels) plus every pool triple with a final
    label (judged, adjudicated, rule, imported), gold checks never. Sorted by (head, relation, tail)."""
    labels: dict[tuple[str, str, str], str] = {}
    items = Item.objects.filter(campaign=campaign, is_gold=False, status__in=FINAL_STATUSES).exclude(label="")
    for h, r, t, label in items.values_list("head__key", "relation__key", "tail__key", "label").iterator(chunk_size=5000):
        labels[(h, r, t)] = label
    sample = SampleTriple.objects.filter(sample=campaign.pool.sample_id)
    for h, r, t in sample.values_list("head__key", "relation__key", "tail__key"):
        labels[(h, r, t)] = Label.YES
    return [LabelledTriple(h, r, t, label) for (h, r, t), label in sorted(labels.items())]


@dataclass(frozen=True)
class CompletedQuestion:
    qid: str
    side: int  # HEAD: (?, r, entity); TAIL: (entity, r, ?)
    entity: str
    relation: str
    answers: tuple[tuple[str, int], ...]  # (answer entity key, 1 relevant / 0 judged not relevant)


def completed_questions(campaign: Campaign) -> list[CompletedQuestion]:
    """Questions of the completed set: every question with at least one positive answer -- the questions the
    evaluation ranks on the completed labels (both sides of every positive triple, SPEC 5.2). The sample's
    questions keep their qid; the others (the other side of a positive pool triple) are numbered on, ``head<N>`` /
    ``tail<N>`` after the sample's, in (relation, entity) order (``pooling.selectors.questions``, shared with the
    evaluation). Answers: every labelled triple that answers the question, relevant 1 (Y) or 0 (N)."""
    sample = campaign.pool.sample
    labelled = completed_labels(campaign)
    relations = kg_relation_keys(sample.kg)
    # only the entities of the labelled triples and the sample's questions, not the KG's millions
    entity_index = entity_indices_of_keys(sample.kg, [key for x in labelled for key in (x.head, x.tail)])
    relation_index = {key: index for index, key in enumerate(relations)}
    answers: dict[tuple[int, int, int], list[tuple[str, int]]] = defaultdict(list)
    positives: list[tuple[int, int, int]] = []
    for triple in labelled:
        h, r, t = entity_index[triple.head], relation_index[triple.relation], entity_index[triple.tail]
        rel = 1 if triple.label == Label.YES else 0
        answers[(HEAD, r, t)].append((triple.head, rel))
        answers[(TAIL, r, h)].append((triple.tail, rel))
        if rel:
            positives.append((h, r, t))
    sq = sample_questions(sample)
    entities = {index: key for key, index in entity_index.items()}
    entities.update(entity_keys_of_indices(sample.kg, set(sq.questions.anchor.tolist()) - set(entities)))
    asked = completion_questions(sq.questions, sq.qids, np.array(positives, dtype=np.int64).reshape(-1, 3),
                                 entities, relations, sample.kg.num_entities)
    result = []
    for row, qid in enumerate(asked.qids):
        side, relation, anchor = (int(asked.questions.side[row]), int(asked.questions.relation[row]),
                                  int(asked.questions.anchor[row]))
        rows = answers.get((side, relation, anchor), [])
        if any(rel for _answer, rel in rows):
            result.append(CompletedQuestion(qid, side, entities[anchor], relations[relation], tuple(sorted(rows))))
    return sorted(result, key=lambda q: (q.side, _qid_number(q.qid)))


def _qid_number(qid: str) -> int:
    digits = "".join(ch for ch in qid if ch.isdigit())
    return int(digits) if digits else 0


def pseudonym(user_id: int | None) -> str | None:
    return None if user_id is None else f"annotator-{user_id}"


@dataclass
class Provenance:
    head: str
    relation: str
    tail: str
    head_name: str
    tail_name: str
    label: str | None
    status: str
    origin: str
    rule: str
    depth: int | None
    systems: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    judgments: list[dict] = field(default_factory=list)
    adjudication: dict | None = None
    flags: list[str] = field(default_factory=list)
    history: list[dict] | None = None  # the label history, when asked for (``with_history``)

    def as_dict(self) -> dict:
        record = dict(self.__dict__)
        if record["history"] is None:
            del record["history"]
        return record


def label_history(campaign: Campaign) -> dict[int, list[dict]]:
    """Item pk -> the history of its people's labels (``LabelVersion``), oldest first, users pseudonymised."""
    history: dict[int, list[dict]] = defaultdict(list)
    versions = LabelVersion.objects.filter(item__campaign=campaign, item__is_gold=False).order_by("changed_at", "pk")
    for v in versions.iterator(chunk_size=5000):
        history[v.item_id].append({
            "kind": v.kind, "reason": v.reason, "author": pseudonym(v.author_id), "changed_by": pseudonym(v.changed_by_id),
            "changed_at": v.changed_at.isoformat(), "old_answer": v.old_answer, "new_answer": v.new_answer,
            "old_source_url": v.old_source_url, "new_source_url": v.new_source_url, "old_text": v.old_text,
            "new_text": v.new_text, "note": v.note,
        })
    return history


def label_provenance(campaign: Campaign, *, with_history: bool = False) -> list[Provenance]:
    """Every non-gold item of the campaign (decided or not) and the sample's test triples (origin ``test``),
    with judgments, adjudication, sources, rule, pool depth, systems and the questions that pooled them; with
    ``with_history``, also every version of the item's judgments, adjudication and expert labels (who changed
    what, when and why; the sample's triples have none)."""
    kg_id = campaign.pool.sample.kg_id
    rkeys = dict(Relation.objects.filter(kg_id=kg_id).values_list("pk", "key"))
    question_qid = {
        (side, anchor, relation): qid
        for qid, side, anchor, relation in Question.objects.filter(sample=campaign.pool.sample_id).values_list(
            "qid", "side", "anchor_id", "relation_id"
        )
    }
    systems: dict[int, set[str]] = defaultdict(set)
    hit_qids: dict[int, set[str]] = defaultdict(set)
    for entry_id, system, qid in PoolHit.objects.filter(entry__pool=campaign.pool_id).values_list(
        "entry_id", "system__name", "question__qid"
    ):
        if system is not None:  # hits of a pool imported without its systems name none
            systems[entry_id].add(system)
        hit_qids[entry_id].add(qid)
    judgments: dict[int, list[dict]] = defaultdict(list)
    for j in Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).order_by("given_at", "pk"):
        judgments[j.item_id].append({
            "annotator": pseudonym(j.user_id), "answer": j.answer, "source_url": j.source_url,
            "source_domain": j.source_domain, "quote": j.quote, "given_at": j.given_at.isoformat(),
            "time_on_task_ms": j.time_on_task_ms,
        })
    adjudications = {
        a.item_id: {"adjudicator": pseudonym(a.adjudicator_id), "label": a.label, "reason": a.reason,
                    "decided_at": a.decided_at.isoformat()}
        for a in Adjudication.objects.filter(item__campaign=campaign, item__is_gold=False)
    }
    history = label_history(campaign) if with_history else None
    rows: list[Provenance] = []
    items = list(Item.objects.filter(campaign=campaign, is_gold=False).values_list(
        "pk", "entry_id", "entry__depth", "head_id", "relation_id", "tail_id", "label", "status", "label_origin",
        "rule", "flags",
    ).iterator(chunk_size=5000))
    sampled = list(SampleTriple.objects.filter(sample=campaign.pool.sample_id).values_list("head_id", "relation_id", "tail_id"))
    # key and name of only the entities named here (not every entity of the KG)
    entity = entity_fields_of_pks({e for row in items for e in (row[3], row[5])} | {e for h, _r, t in sampled for e in (h, t)},
                                  "key", "name")
    ekeys = {pk: key for pk, (key, _name) in entity.items()}
    names = {pk: name for pk, (_key, name) in entity.items()}
    for pk, entry_id, depth, h, r, t, label, status, origin, rule, flags in items:
        qids = hit_qids.get(entry_id) or {
            q for q in (question_qid.get((TAIL, h, r)), question_qid.get((HEAD, t, r))) if q is not None
        }
        final = status in FINAL_STATUSES and label
        rows.append(Provenance(
            ekeys[h], rkeys[r], ekeys[t], names[h], names[t], label if final else None, status, origin if final else "",
            rule, depth, sorted(systems.get(entry_id, ())), sorted(qids, key=lambda q: (q[:4], _qid_number(q))),
            judgments.get(pk, []), adjudications.get(pk), list(flags or []),
            history.get(pk, []) if history is not None else None,
        ))
    for h, r, t in sampled:
        qids = [q for q in (question_qid.get((HEAD, t, r)), question_qid.get((TAIL, h, r))) if q]
        rows.append(Provenance(ekeys[h], rkeys[r], ekeys[t], names[h], names[t], Label.YES, "test", "test", "", None,
                               [], qids, history=[] if with_history else None))
    rows.sort(key=lambda p: (p.head, p.relation, p.tail))
    return rows
