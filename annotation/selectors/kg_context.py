"""What the knowledge graph already says around an item, so a person can decide the easy cases on the page
(issue 15): a few known facts of each entity, the other known answers of the question, and in plain words
why the candidate is asked (for which sampled test triple's question). Which systems proposed the candidate, and
at which rank, is never shown: it would anchor people's answers (TREC assessors never see it either), and gold
checks, which no system pooled, would stand out by its absence.

Everything comes from the train split through the indexed triple lookups (``triple_head_relation_tail``,
``triple_tail_relation``, ``pool_entry_unique_triple``): a fixed number of queries per page, whatever the number
of facts, answers or systems, and never a scan of the whole train table. The candidate triple itself is never
shown as a fact or an answer (a gold check drawn from train would otherwise show its own answer)."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from annotation.models import Campaign, Item
from pooling.models import PoolHit, Question, SampleTriple, Split, Triple

FACTS_PER_ENTITY = 5
KNOWN_ANSWERS = 10
TEST_TRIPLES_PER_QUESTION = 3


@dataclass(frozen=True)
class Fact:
    """A train triple of an entity: ``relation`` and the ``other`` entity; ``outgoing`` when the entity is the
    head (entity —relation→ other), else the tail (other —relation→ entity)."""

    relation: str
    other: str
    outgoing: bool


@dataclass(frozen=True)
class KnownAnswers:
    question: str  # "(Jeremy Irons, nationality, ?)"
    answers: list[str]
    more: bool  # there are more than shown


@dataclass
class WhyAsked:
    """One question that pooled the candidate and the test triples that ask it."""

    question: str
    test_triples: list[str] = field(default_factory=list)
    more_test_triples: int = 0


@dataclass
class KgContext:
    head_facts: list[Fact]
    tail_facts: list[Fact]
    known_answers: list[KnownAnswers]
    why: list[WhyAsked]


def _name(name: str, key: str) -> str:
    return name or key


def _fact_groups(counts: list[tuple[int, int, int, bool]], entity: int, relation: int) -> list[tuple[int, bool]]:
    """The (relation, outgoing) groups of ``entity`` to draw its facts from, in the shown order: the question's
    relation first, then the entity's most frequent relations (ties: relation id); just enough groups to hold
    FACTS_PER_ENTITY facts."""
    mine = [(rel, out, n) for ent, rel, n, out in counts if ent == entity]
    mine.sort(key=lambda g: (g[0] != relation, -g[2], g[0], not g[1]))
    groups, covered = [], 0
    for rel, out, n in mine:
        if covered >= FACTS_PER_ENTITY:
            break
        groups.append((rel, out))
        covered += n
    return groups


def _facts(item: Item, kg_id: int) -> tuple[list[Fact], list[Fact]]:
    """Up to FACTS_PER_ENTITY train facts of the head and of the tail: four queries at most (relation counts
    of both entities as head and as tail, then the first facts of the chosen groups, ranked in the database)."""
    entities = {item.head_id, item.tail_id}
    train = Triple.objects.filter(kg_id=kg_id, split=Split.TRAIN).exclude(
        head_id=item.head_id, relation_id=item.relation_id, tail_id=item.tail_id)
    counts: list[tuple[int, int, int, bool]] = []
    for side, outgoing in (("head_id", True), ("tail_id", False)):
        rows = (train.filter(**{f"{side}__in": entities}).values_list(side, "relation_id")
                .annotate(n=Count("pk")).order_by())
        counts += [(entity, rel, n, outgoing) for entity, rel, n in rows]
    groups = {entity: _fact_groups(counts, entity, item.relation_id) for entity in entities}
    found: dict[tuple[int, int, bool], list[tuple]] = {}
    for side, other, outgoing in (("head_id", "tail", True), ("tail_id", "head", False)):
        wanted = [(entity, rel) for entity, chosen in groups.items() for rel, out in chosen if out == outgoing]
        if not wanted:
            continue
        match = Q()
        for entity, rel in wanted:
            match |= Q(**{side: entity, "relation_id": rel})
        rows = (train.filter(match)
                .annotate(row=Window(RowNumber(), partition_by=[F(side), F("relation_id")],
                                     order_by=[F(f"{other}__index").asc()]))
                .filter(row__lte=FACTS_PER_ENTITY)
                .values_list(side, "relation_id", "relation__text", "relation__key", f"{other}__name", f"{other}__key"))
        for entity, rel, rel_text, rel_key, other_name, other_key in rows:
            found.setdefault((entity, rel, outgoing), []).append((_name(rel_text, rel_key), _name(other_name, other_key)))

    def facts_of(entity: int) -> list[Fact]:
        facts: list[Fact] = []
        for rel, outgoing in groups[entity]:
            for relation, other in sorted(found.get((entity, rel, outgoing), []), key=lambda f: f[1].lower()):
                facts.append(Fact(relation, other, outgoing))
        return facts[:FACTS_PER_ENTITY]

    return facts_of(item.head_id), facts_of(item.tail_id)


def _questions(item: Item, campaign: Campaign) -> dict[int, tuple[int, str]]:
    """The questions that pooled the candidate (pk -> (side, qid)): one query on the pool entry of the triple,
    one more for the sample's questions the triple answers when the pool has no such entry (gold checks)."""
    rows = (PoolHit.objects.filter(entry__pool_id=campaign.pool_id, entry__head_id=item.head_id,
                                   entry__relation_id=item.relation_id, entry__tail_id=item.tail_id)
            .order_by("question__position").values_list("question_id", "question__side", "question__qid").distinct())
    questions = {q: (side, qid) for q, side, qid in rows}
    if not questions:
        rows = Question.objects.filter(sample_id=campaign.pool.sample_id, relation_id=item.relation_id).filter(
            Q(side=Question.Side.TAIL, anchor_id=item.head_id) | Q(side=Question.Side.HEAD, anchor_id=item.tail_id)
        ).order_by("position").values_list("pk", "side", "qid")
        questions = {q: (side, qid) for q, side, qid in rows}
    return questions


def kg_context(item: Item, campaign: Campaign) -> KgContext:
    """The KG context of ``item`` (of ``campaign``, its pool and sample loaded) for the judge and adjudication
    pages: at most eleven queries, whatever the KG's size and the numbers of facts, answers and systems."""
    if not all(Item._meta.get_field(name).is_cached(item) for name in ("head", "relation", "tail")):
        item = Item.objects.select_related("head", "tail", "relation").get(pk=item.pk)
    kg_id = campaign.pool.sample.kg_id
    head, tail, relation = item.head, item.tail, item.relation
    head_name, tail_name, rel_name = _name(head.name, head.key), _name(tail.name, tail.key), _name(relation.text, relation.key)
    head_facts, tail_facts = _facts(item, kg_id)
    questions = _questions(item, campaign)
    sides = {side for side, _qid in questions.values()} or {Question.Side.TAIL, Question.Side.HEAD}

    known = []
    train = Triple.objects.filter(kg_id=kg_id, split=Split.TRAIN, relation_id=item.relation_id)
    for side in sorted(sides, reverse=True):  # the tail question (h, r, ?) first
        if side == Question.Side.TAIL:
            rows = train.filter(head_id=item.head_id).exclude(tail_id=item.tail_id).order_by("tail__name", "tail_id")
            names = [_name(n, k) for n, k in rows.values_list("tail__name", "tail__key")[:KNOWN_ANSWERS + 1]]
            asked = f"({head_name}, {rel_name}, ?)"
        else:
            rows = train.filter(tail_id=item.tail_id).exclude(head_id=item.head_id).order_by("head__name", "head_id")
            names = [_name(n, k) for n, k in rows.values_list("head__name", "head__key")[:KNOWN_ANSWERS + 1]]
            asked = f"(?, {rel_name}, {tail_name})"
        known.append(KnownAnswers(asked, names[:KNOWN_ANSWERS], len(names) > KNOWN_ANSWERS))

    why: dict[int, WhyAsked] = {}
    for pk, (side, _qid) in questions.items():
        asked = f"(?, {rel_name}, {tail_name})" if side == Question.Side.HEAD else f"({head_name}, {rel_name}, ?)"
        why[pk] = WhyAsked(asked)
    if why:
        links = (SampleTriple.objects.filter(questions__in=list(why)).annotate(question_pk=F("questions__pk"))
                 .annotate(row=Window(RowNumber(), partition_by=[F("question_pk")], order_by=[F("position").asc()]))
                 .filter(row__lte=TEST_TRIPLES_PER_QUESTION + 1)
                 .values_list("question_pk", "head__name", "head__key", "relation__text", "relation__key",
                              "tail__name", "tail__key"))
        for question, h_name, h_key, r_text, r_key, t_name, t_key in links:
            entry = why[question]
            if len(entry.test_triples) < TEST_TRIPLES_PER_QUESTION:
                entry.test_triples.append(f"({_name(h_name, h_key)}, {_name(r_text, r_key)}, {_name(t_name, t_key)})")
            else:
                entry.more_test_triples = 1  # "and more": counting them all is not worth a query
    return KgContext(head_facts, tail_facts, known, list(why.values()))
