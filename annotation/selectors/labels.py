"""Reads: the completed label set of a campaign and the provenance of every label (for exports, evaluation)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from annotation.models import Adjudication, Campaign, Item, Judgment, Label
from pooling.engine.questions import HEAD, TAIL
from pooling.models import Entity, PoolHit, Question, Relation, SampleTriple

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
    """Questions of the completed set: every question with at least one positive answer. The sample's
    questions keep their qid; other questions (the other side of a positive pool triple) are numbered on,
    ``head<N>`` / ``tail<N>`` after the sample's, in (relation, entity) order. Answers: every labelled triple
    that answers the question, relevant 1 (Y) or 0 (N)."""
    labels = completed_labels(campaign)
    answers: dict[tuple[int, str, str], list[tuple[str, int]]] = defaultdict(list)
    positive: set[tuple[int, str, str]] = set()
    for triple in labels:
        rel = 1 if triple.label == Label.YES else 0
        for key, answer in (((HEAD, triple.tail, triple.relation), triple.head), ((TAIL, triple.head, triple.relation), triple.tail)):
            answers[key].append((answer, rel))
            if rel:
                positive.add(key)
    qids: dict[tuple[int, str, str], str] = {}
    counters = {HEAD: 0, TAIL: 0}
    for qid, side, anchor, relation in Question.objects.filter(sample=campaign.pool.sample_id).values_list(
        "qid", "side", "anchor__key", "relation__key"
    ):
        qids[(side, anchor, relation)] = qid
        prefix, _, number = qid.partition("head" if side == HEAD else "tail")
        if not prefix and number.isdigit():
            counters[side] = max(counters[side], int(number) + 1)
    result = []
    for key in sorted(positive, key=lambda k: (k[0], k[2], k[1])):
        side, entity, relation = key
        if key not in qids:
            qids[key] = f"{'head' if side == HEAD else 'tail'}{counters[side]}"
            counters[side] += 1
        result.append(CompletedQuestion(qids[key], side, entity, relation, tuple(sorted(answers[key]))))
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

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def label_provenance(campaign: Campaign) -> list[Provenance]:
    """Every non-gold item of the campaign (decided or not) and the sample's test triples (origin ``test``),
    with judgments, adjudication, sources, rule, pool depth, systems and the questions that pooled them."""
    kg_id = campaign.pool.sample.kg_id
    names = dict(Entity.objects.filter(kg_id=kg_id).values_list("pk", "name"))
    ekeys = dict(Entity.objects.filter(kg_id=kg_id).values_list("pk", "key"))
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
    rows: list[Provenance] = []
    items = Item.objects.filter(campaign=campaign, is_gold=False).values_list(
        "pk", "entry_id", "entry__depth", "head_id", "relation_id", "tail_id", "label", "status", "label_origin",
        "rule", "flags",
    )
    for pk, entry_id, depth, h, r, t, label, status, origin, rule, flags in items.iterator(chunk_size=5000):
        qids = hit_qids.get(entry_id) or {
            q for q in (question_qid.get((TAIL, h, r)), question_qid.get((HEAD, t, r))) if q is not None
        }
        final = status in FINAL_STATUSES and label
        rows.append(Provenance(
            ekeys[h], rkeys[r], ekeys[t], names[h], names[t], label if final else None, status, origin if final else "",
            rule, depth, sorted(systems.get(entry_id, ())), sorted(qids, key=lambda q: (q[:4], _qid_number(q))),
            judgments.get(pk, []), adjudications.get(pk), list(flags or []),
        ))
    for h, r, t in SampleTriple.objects.filter(sample=campaign.pool.sample_id).values_list("head_id", "relation_id", "tail_id"):
        qids = [q for q in (question_qid.get((HEAD, t, r)), question_qid.get((TAIL, h, r))) if q]
        rows.append(Provenance(ekeys[h], rkeys[r], ekeys[t], names[h], names[t], Label.YES, "test", "test", "", None,
                               [], qids))
    rows.sort(key=lambda p: (p.head, p.relation, p.tail))
    return rows
