"""Reads: judging quality (issue 8): agreement with bootstrap intervals by group, rushed answers, the evidence
an adjudicator compares, label origins."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median

from django.contrib.auth import get_user_model

from annotation.lib.agreement import Interval, Table, table_from_pairs, table_intervals
from annotation.models import Adjudication, Answer, Campaign, Item, Judgment, Label
from annotation.selectors.agreement import Pairs, grouped_answer_pairs

# ---------------------------------------------------------------------------------------------------------
# Label origin

def origin_name(origin: str, rule: str = "") -> str:
    """The origin of a final label as exported: unanimous, adjudicated, rule:<rule(s)>, audit (the expert-audit
    majority), reused, imported (``reused`` keeps the rule of a reused rule label: reused:rule:type)."""
    if origin == Item.Origin.RULE:
        return f"rule:{rule}" if rule else "rule"
    if origin == Item.Origin.REUSED and rule:
        return f"reused:rule:{rule}"
    return origin


# ---------------------------------------------------------------------------------------------------------
# Agreement with confidence intervals

CI_GROUPINGS = ("overall", "relation", "category", "depth", "system", "domain")


@dataclass(frozen=True)
class AgreementCI:
    group: str
    items: int  # items with two judgments, can't tell included (as on the agreement page)
    table: Table  # (first judgment, second judgment) counts, can't-tell pairs beside
    percent: Interval
    kappa: Interval
    ac1: Interval
    alpha: Interval
    cant_tell: int = 0  # items whose two judgments include a can't tell


def agreement_with_ci(
    campaign: Campaign, by: str = "overall", *, samples: int = 1000, level: float = 0.95, seed: int = 0,
    pairs: Pairs | None = None,
) -> list[AgreementCI]:
    """The agreement statistics of :func:`annotation.selectors.agreement.agreement` (the same items, groups and
    can't-tell rules, so the same estimates), each with a percentile bootstrap interval (items resampled,
    ``seed``ed). ``pairs``: ``judgment_pairs(campaign)`` when the caller already read them."""
    rows = []
    for key, answers in grouped_answer_pairs(campaign, by, pairs).items():
        table = table_from_pairs(answers, yes=Label.YES, cant_tell=Answer.CANT_TELL)
        stats = table_intervals(table, samples=samples, level=level, seed=seed)
        rows.append(AgreementCI(key, table.pairs, table, stats["percent"], stats["kappa"], stats["ac1"], stats["alpha"],
                                table.cant_tell))
    return rows


# ---------------------------------------------------------------------------------------------------------
# Rushed answers

@dataclass(frozen=True)
class RushedJudgment:
    judgment_id: int
    item_id: int
    user_id: int
    username: str
    time_on_task_ms: int


@dataclass(frozen=True)
class AnnotatorPace:
    user_id: int
    username: str
    judgments: int
    median_ms: float
    ratio: float  # the annotator's median / the campaign's median
    rushed: int  # of their judgments under the limit
    flagged: bool  # median under rushed_factor x the campaign's median


@dataclass
class RushedReport:
    factor: float
    median_ms: float | None  # campaign median time on task (every judgment with a time, gold checks included)
    limit_ms: float | None  # factor x median: faster judgments are flagged
    judgments: list[RushedJudgment] = field(default_factory=list)
    annotators: list[AnnotatorPace] = field(default_factory=list)  # everyone with timed judgments, slowest ratio last

    @property
    def flagged_annotators(self) -> list[AnnotatorPace]:
        return [a for a in self.annotators if a.flagged]


def rushed_report(campaign: Campaign, factor: float | None = None) -> RushedReport:
    """Judgments faster than ``factor`` (default the campaign's ``rushed_factor``) x the campaign's median time
    on task, and annotators whose own median is under that same share of the campaign's median. The times are
    the server's measure (``Judgment.time_on_task_ms``, hand-out to answer), never the client's own figure."""
    factor = campaign.rushed_factor if factor is None else factor
    rows = list(
        Judgment.objects.filter(item__campaign=campaign).exclude(time_on_task_ms=None)
        .order_by("pk").values_list("pk", "item_id", "user_id", "time_on_task_ms")
    )
    if not rows:
        return RushedReport(factor, None, None)
    overall = float(median(t for *_x, t in rows))
    limit = factor * overall
    names = dict(get_user_model().objects.filter(pk__in={u for _p, _i, u, _t in rows}).values_list("pk", "username"))
    report = RushedReport(factor, overall, limit)
    by_user: dict[int, list[int]] = defaultdict(list)
    for pk, item_id, user_id, ms in rows:
        by_user[user_id].append(ms)
        if ms < limit:
            report.judgments.append(RushedJudgment(pk, item_id, user_id, names.get(user_id, str(user_id)), ms))
    for user_id, times in by_user.items():
        own = float(median(times))
        ratio = own / overall if overall else float("nan")
        report.annotators.append(AnnotatorPace(
            user_id, names.get(user_id, str(user_id)), len(times), own, ratio, sum(t < limit for t in times),
            overall > 0 and own < limit,
        ))
    report.annotators.sort(key=lambda a: (a.ratio, a.username))
    return report


# ---------------------------------------------------------------------------------------------------------
# Evidence side by side (the adjudication page)

@dataclass(frozen=True)
class Evidence:
    judgment_id: int
    annotator: str  # username (adjudicators are campaign staff; exports use pseudonyms)
    answer: str
    source_url: str
    source_domain: str
    quote: str
    given_at: datetime
    time_on_task_ms: int | None


FLAG_TEXT = {
    "single_answer": "another 'yes' exists for a question whose relation allows one answer",
    "kg_states": "answered 'no' but the KG states this triple",
    "cross_campaign": "labelled differently in another campaign on the same KG",
}


@dataclass(frozen=True)
class AdjudicationCase:
    item_id: int
    head: str
    relation: str
    tail: str
    question: str
    evidence: list[Evidence]  # both annotators' answers and sources, in the order given
    flags: list[tuple[str, str]]  # (flag, readable explanation)
    adjudication: Adjudication | None


def adjudication_case(item: Item) -> AdjudicationCase:
    """What the adjudicator sees for an item: the question, both annotators' evidence side by side (answer,
    normalised source URL, its allow-listed domain, quote, time given) and the consistency flags."""
    from annotation.selectors.templates import item_question

    item = Item.objects.select_related("head", "relation", "tail", "campaign").get(pk=item.pk)
    evidence = [
        Evidence(j.pk, j.user.username, j.answer, j.source_url, j.source_domain, j.quote, j.given_at, j.time_on_task_ms)
        for j in Judgment.objects.filter(item=item).select_related("user").order_by("given_at", "pk")
    ]
    flags = [(flag, FLAG_TEXT.get(flag.split(":", 1)[0], flag)) for flag in item.flags or []]
    return AdjudicationCase(
        item.pk, item.head.name or item.head.key, item.relation.key, item.tail.name or item.tail.key,
        item_question(item), evidence, flags, Adjudication.objects.filter(item=item).first(),
    )


# ---------------------------------------------------------------------------------------------------------
# Exports kept apart by origin: the completed set with an origin column, and qrels of one annotator

def labels_with_origin(campaign: Campaign) -> list[tuple[str, str, str, str, str]]:
    """The completed set (as ``completed_labels``) as (head, relation, tail, label, origin): origin per
    :func:`origin_name`, ``test`` for the sampled test triples."""
    from annotation.selectors.labels import FINAL_STATUSES
    from pooling.models import SampleTriple

    rows: dict[tuple[str, str, str], tuple[str, str]] = {}
    items = Item.objects.filter(campaign=campaign, is_gold=False, status__in=FINAL_STATUSES).exclude(label="")
    for h, r, t, label, origin, rule in items.values_list(
        "head__key", "relation__key", "tail__key", "label", "label_origin", "rule"
    ).iterator(chunk_size=5000):
        rows[(h, r, t)] = (label, origin_name(origin, rule))
    for h, r, t in SampleTriple.objects.filter(sample=campaign.pool.sample_id).values_list(
        "head__key", "relation__key", "tail__key"
    ):
        rows[(h, r, t)] = (Label.YES, "test")
    return [(h, r, t, label, origin) for (h, r, t), (label, origin) in sorted(rows.items())]


QuestionKey = tuple[int, str, str]  # (side, entity, relation)


def _question_order(key: QuestionKey) -> tuple[int, str, str]:
    return key[0], key[2], key[1]  # side, relation, entity


def annotator_qrels(campaign: Campaign, user, qids: tuple[dict[QuestionKey, str], set[QuestionKey]] | None = None
                    ) -> list[tuple[str, str, int]]:
    """TREC qrels rows (qid, entity, rel) of ``user``'s own answers (gold checks left out): every triple they
    judged answers its tail question (h, r, ?) and its head question (?, r, t). Qids are ``annotation_qids``: those of
    the final qrels, and campaign-wide ones for the questions only some annotator answered Y, so that one question has
    one qid in every annotator's file; questions where the annotator said only N and that the final set lacks are
    left out (a question without a relevant answer does not count in trec_eval); can't-tell answers are no
    judgment of relevance and are left out. ``qids``: ``annotation_qids(campaign)`` when the caller exports every
    annotator's file (computed once)."""
    from annotation.selectors.labels import _qid_number
    from pooling.engine.questions import HEAD, TAIL

    answers: dict[QuestionKey, dict[str, int]] = defaultdict(dict)
    for h, r, t, answer in Judgment.objects.filter(item__campaign=campaign, item__is_gold=False, user=user).values_list(
        "item__head__key", "item__relation__key", "item__tail__key", "answer"
    ):
        if answer not in (Label.YES, Label.NO):
            continue  # can't tell: the annotator gave no label for this triple
        rel = 1 if answer == Label.YES else 0
        answers[(TAIL, h, r)][t] = rel
        answers[(HEAD, t, r)][h] = rel
    qid_of, outside_final = qids if qids is not None else annotation_qids(campaign)
    rows = []
    for key in sorted(answers, key=_question_order):
        final = key in qid_of and key not in outside_final
        if final or any(answers[key].values()):  # a Y of theirs: the question has a qid (``annotation_qids``)
            rows += [(qid_of[key], entity, rel) for entity, rel in sorted(answers[key].items())]
    return sorted(rows, key=lambda row: (row[0][:4], _qid_number(row[0]), row[1]))


def annotation_qids(campaign: Campaign) -> tuple[dict[QuestionKey, str], set[QuestionKey]]:
    """(side, entity, relation) -> qid for every question of the annotators' qrels, and the questions among them
    that the final set lacks. The final qrels' qids (``completed_questions``), then each question that some annotator
    answered Y and the final set lacks, numbered on from the largest qid of the sample and the final set, in
    (side, relation, entity) order over the whole campaign (numbered per annotator, two annotators' files gave one qid
    to two different questions)."""
    from annotation.selectors.labels import _qid_number, completed_questions
    from pooling.engine.questions import HEAD, TAIL
    from pooling.models import Question

    qids: dict[QuestionKey, str] = {}
    counters = {HEAD: 0, TAIL: 0}
    for question in completed_questions(campaign):
        qids[(question.side, question.entity, question.relation)] = question.qid
        counters[question.side] = max(counters[question.side], _qid_number(question.qid) + 1)
    for qid, side in Question.objects.filter(sample=campaign.pool.sample_id).values_list("qid", "side"):
        counters[side] = max(counters[side], _qid_number(qid) + 1)
    only_annotators: set[QuestionKey] = set()
    for h, r, t in Judgment.objects.filter(item__campaign=campaign, item__is_gold=False, answer=Label.YES).values_list(
        "item__head__key", "item__relation__key", "item__tail__key"
    ):
        only_annotators.update(key for key in ((TAIL, h, r), (HEAD, t, r)) if key not in qids)
    for side, entity, relation in sorted(only_annotators, key=_question_order):
        qids[(side, entity, relation)] = f"{'head' if side == HEAD else 'tail'}{counters[side]}"
        counters[side] += 1
    return qids, only_annotators


# ---------------------------------------------------------------------------------------------------------
# Consistency flags recorded on the campaign's items (the quality page)

@dataclass(frozen=True)
class FlagCount:
    kind: str  # single_answer, kg_states, cross_campaign
    explanation: str
    items: int  # items carrying a flag of this kind
    open: int  # of those, still waiting for adjudication (status conflict)


def flag_counts(campaign: Campaign) -> list[FlagCount]:
    """How many items carry each kind of consistency flag (gold checks are never flagged), every kind listed."""
    items: dict[str, int] = defaultdict(int)
    waiting: dict[str, int] = defaultdict(int)
    rows = Item.objects.filter(campaign=campaign, is_gold=False).exclude(flags=[]).values_list("flags", "status")
    for flags, status in rows.iterator(chunk_size=5000):
        for kind in {flag.split(":", 1)[0] for flag in flags or []}:
            items[kind] += 1
            waiting[kind] += status == Item.Status.CONFLICT
    kinds = list(FLAG_TEXT) + sorted(set(items) - set(FLAG_TEXT))
    return [FlagCount(kind, FLAG_TEXT.get(kind, kind), items[kind], waiting[kind]) for kind in kinds]
