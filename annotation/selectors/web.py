"""Reads for the judging web pages and the JSON API (issue 4): what one person may see of an item, their
progress, the adjudication view, the manager's dashboard. Nothing here writes.

Visibility rules (enforced here, used by pages and API alike):
- an annotator sees an item only while they hold its open judging hand-out, and never another's answer;
- an adjudicator sees both answers only of an item handed to them for adjudication (never one they judged);
- campaign admins (role admin, superusers) and staff manage the campaign.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from django.db import connections, router
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.lib.sources import SourceError, check_source
from annotation.models import Adjudication, Assignment, Campaign, Item, Judgment, Membership, Role
from annotation.selectors._compiled import compiled
from annotation.selectors.campaigns import campaign_progress, user_roles
from annotation.selectors.item_counts import ItemCounts, item_counts
from annotation.selectors.labels import FINAL_STATUSES
from annotation.selectors.templates import item_question, safe_question, template_text
from pooling.models import Entity, Pool, PoolHit, Question, Relation, SampleTriple


STATUS_ORDER = (
    Item.Status.PENDING, Item.Status.IN_PROGRESS, Item.Status.AGREED, Item.Status.CONFLICT,
    Item.Status.ADJUDICATED, Item.Status.AUTO_NEGATIVE, Item.Status.IMPORTED,
)


def can_manage(campaign: Campaign, user) -> bool:
    """Campaign admins (role admin, superusers) and staff manage a campaign."""
    return bool(getattr(user, "is_staff", False)) or Role.ADMIN in user_roles(campaign, user)


def request_id_for(assignment: Assignment) -> str:
    """The idempotency key of a hand-out: every submit of this hand-out (double click, retry) carries it."""
    return f"assignment-{assignment.pk}"


@dataclass(frozen=True)
class EntityView:
    key: str
    name: str
    description: str
    types: list[str]
    url: str
    wikidata_url: str

    @classmethod
    def of(cls, entity: Entity) -> EntityView:
        wikidata = f"https://www.wikidata.org/wiki/{entity.wikidata_id}" if entity.wikidata_id else ""
        return cls(entity.key, entity.name or entity.key, entity.description, [str(t) for t in entity.types or []],
                   entity.url, wikidata)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class OriginTriple:
    """A sampled test triple whose question pooled the item, and that question."""

    head: str
    relation: str
    tail: str
    qid: str
    question: str  # "(Jeremy Irons, nationality, ?)"

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ItemView:
    """What a judge sees of an item: no id, no status, no gold flag, no other judgment. The work is addressed
    by its hand-out id (``Assignment.pk``) instead: item pks would tell gold checks (created last) apart."""

    question: str
    head: EntityView
    relation_key: str
    relation_text: str
    tail: EntityView
    origins: list[OriginTriple] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "question": self.question, "head": self.head.as_dict(),
            "relation": {"key": self.relation_key, "text": self.relation_text}, "tail": self.tail.as_dict(),
            "origins": [o.as_dict() for o in self.origins],
        }


#: the origins an item shows at most
ORIGINS_SHOWN = 10


def origin_triples(item: Item, limit: int = ORIGINS_SHOWN) -> list[OriginTriple]:
    """The sampled test triples behind the questions that pooled ``item``: the questions of its pool hits, or
    (entries without hits, gold checks) the sample's questions the triple answers. Three queries at most."""
    # Plain rows of the few columns shown (no model instances): the ORM compiles and loads a fraction of the
    # columns select_related would (this runs on every hand-out).
    asked_by = Question.objects.order_by("side", "position").values_list(
        "pk", "side", "qid", "anchor__name", "anchor__key", "relation__text", "relation__key")
    questions: list[tuple] = []
    if item.entry_id is not None:
        hits = PoolHit.objects.filter(entry_id=item.entry_id).values("question_id")
        questions = list(asked_by.filter(pk__in=hits)[:limit])
    if not questions:
        sample = Pool.objects.filter(campaigns=item.campaign_id).values("sample_id")
        questions = list(
            asked_by.filter(sample_id__in=sample, relation_id=item.relation_id).filter(
                Q(side=Question.Side.TAIL, anchor_id=item.head_id) | Q(side=Question.Side.HEAD, anchor_id=item.tail_id)
            )[:limit]
        )
    if not questions:
        return []
    triples_of: dict[int, list[tuple]] = {q[0]: [] for q in questions}
    links = (
        SampleTriple.objects.filter(questions__in=list(triples_of))
        .annotate(question_pk=F("questions__pk"))
        .order_by("position")
        .values_list("question_pk", *_TRIPLE_COLUMNS)
    )
    for question_pk, *names in links:
        triples_of[question_pk].append(names)
    return _origin_rows(questions, triples_of, limit)


_QUESTION_COLUMNS = ("pk", "side", "qid", "anchor__name", "anchor__key", "relation__text", "relation__key")
_TRIPLE_COLUMNS = ("head__name", "head__key", "relation__text", "relation__key", "tail__name", "tail__key")


def origin_triples_joined(item: Item, limit: int = ORIGINS_SHOWN) -> list[OriginTriple]:
    """``origin_triples`` in one query: the questions (joined to their triples) of the item's pool hits and the
    sample's questions the triple answers, hit questions first; the latter are kept only when there is no hit
    question. The same rows in the same order (every question holds at least one sampled triple, so the first
    ``limit`` rows come from the first questions). The SQL is built once per process (``_compiled``)."""
    connection = connections[router.db_for_read(SampleTriple)]
    hits = () if item.entry_id is None else (item.entry_id,)
    sql, params = compiled(("origins", connection.alias, bool(hits), limit), partial(_origins_sql, limit=limit),
                           item.campaign_id, item.relation_id, item.head_id, item.tail_id, *hits)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return origins_from_rows(rows, limit)


def origins_from_rows(rows: list[tuple], limit: int = ORIGINS_SHOWN) -> list[OriginTriple]:
    """The origins from the rows of ``origins_query`` (their first ``ORIGIN_COLUMNS`` columns)."""
    if rows and rows[0][0]:
        rows = [row for row in rows if row[0]]
    questions: dict[int, tuple] = {}
    triples_of: dict[int, list[tuple]] = {}
    for row in rows:
        questions.setdefault(row[1], tuple(row[1:8]))
        triples_of.setdefault(row[1], []).append(tuple(row[8:ORIGIN_COLUMNS]))
    return _origin_rows(list(questions.values()), triples_of, limit)


def _origins_sql(campaign_id: int, relation_id: int, head_id: int, tail_id: int, entry_id: int | None = None, *,
                 limit: int) -> tuple[str, list]:
    values = {"campaign": campaign_id, "relation": relation_id, "head": head_id, "tail": tail_id, "entry": entry_id}
    return origins_query({}, values, hits=entry_id is not None, limit=limit)


#: the columns of ``origins_query`` that ``origins_from_rows`` reads, c0 ... c13 (a last one, ``rn``, numbers the rows)
ORIGIN_COLUMNS = 14


def origins_query(columns: dict[str, str], values: dict[str, object], *, hits: bool, limit: int) -> tuple[str, list]:
    """The first ``limit`` (question, sampled triple) pairs by id, then their names by primary key: the hit
    questions and the questions the triple answers as two index look-ups (UNION ALL; a question in both comes
    twice, and the caller keeps only hits when there is one). One condition OR-ing the two made PostgreSQL
    hash whole tables (12 ms a request on FB15k-237, the entity table three times).

    The item's ``campaign``, ``relation``, ``head``, ``tail`` and ``entry`` (pool entry) are SQL expressions from
    ``columns`` (columns of an enclosing statement: the claim's, ``services/hand_out_sql``) or else parameters
    from ``values``; ``hits``: whether the pool-hit branch is there (an entry NULL matches no hit)."""
    params: list = []

    def item(name: str) -> str:
        if name in columns:
            return columns[name]
        params.append(values[name])
        return "%s"

    def constant(value: object) -> str:
        params.append(value)
        return "%s"

    question, entity, relation = Question._meta.db_table, Entity._meta.db_table, Relation._meta.db_table
    triple = SampleTriple._meta.db_table
    link = Question._meta.get_field("triples")
    through = link.remote_field.through._meta.db_table
    to_question, to_triple = link.m2m_column_name(), link.m2m_reverse_name()
    pairs = (f"SELECT {{hit}} AS is_hit, q.id AS question_id, q.side, q.position AS question_position, "
             f"st.id AS triple_id, st.position AS triple_position FROM {question} q "
             f"JOIN {through} qt ON qt.{to_question} = q.id JOIN {triple} st ON st.id = qt.{to_triple} WHERE ")
    branches = []
    if hits:  # first in the text: its parameter comes first
        branches.append(pairs.format(hit="TRUE") + f"q.id IN (SELECT question_id FROM {PoolHit._meta.db_table} "
                        f"WHERE entry_id = {item('entry')})")
    campaign_sample = (f"SELECT p.sample_id FROM {Pool._meta.db_table} p "
                       f"JOIN {Campaign._meta.db_table} c ON c.pool_id = p.id WHERE c.id = {item('campaign')}")
    branches.append(pairs.format(hit="FALSE") + f"q.sample_id IN ({campaign_sample}) AND q.relation_id = "
                    f"{item('relation')} AND ((q.side = {constant(Question.Side.TAIL)} AND q.anchor_id = "
                    f"{item('head')}) OR (q.side = {constant(Question.Side.HEAD)} AND q.anchor_id = {item('tail')}))")
    order = ["is_hit DESC", "side", "question_position", "question_id", "triple_position"]
    first = (f"SELECT * FROM ({' UNION ALL '.join(branches)}) pairs "
             f"ORDER BY {', '.join(order)} LIMIT {int(limit)}")
    ordered = ", ".join(f"o.{column}" for column in order)
    shown = ["o.is_hit", "q.id", "q.side", "q.qid", "a.name", "a.key", "qr.text", "qr.key",
             "h.name", "h.key", "r.text", "r.key", "t.name", "t.key"]  # ORIGIN_COLUMNS, named c0 ... c13
    sql = (
        f"SELECT {', '.join(f'{column} AS c{n}' for n, column in enumerate(shown))}, "
        f"row_number() OVER (ORDER BY {ordered}) AS rn FROM ({first}) o "
        f"JOIN {question} q ON q.id = o.question_id JOIN {entity} a ON a.id = q.anchor_id "
        f"JOIN {relation} qr ON qr.id = q.relation_id JOIN {triple} st ON st.id = o.triple_id "
        f"JOIN {entity} h ON h.id = st.head_id JOIN {relation} r ON r.id = st.relation_id "
        f"JOIN {entity} t ON t.id = st.tail_id ORDER BY {ordered}"
    )
    return sql, params


def _origin_rows(questions: list[tuple], triples_of: dict[int, list[tuple]], limit: int) -> list[OriginTriple]:
    """Origin rows from question rows (``_QUESTION_COLUMNS``) and their triples (``_TRIPLE_COLUMNS``)."""
    rows: list[OriginTriple] = []
    for pk, side, qid, anchor_name, anchor_key, rel_text, rel_key in questions:
        rel = rel_text or rel_key
        anchor = anchor_name or anchor_key
        asked = f"(?, {rel}, {anchor})" if side == Question.Side.HEAD else f"({anchor}, {rel}, ?)"
        for head_name, head_key, t_rel_text, t_rel_key, tail_name, tail_key in triples_of[pk][:limit]:
            rows.append(OriginTriple(head_name or head_key, t_rel_text or t_rel_key, tail_name or tail_key, qid, asked))
    return rows[:limit]


def _with_related(item: Item) -> Item:
    """``item`` with head, relation, tail and campaign loaded: as given when they already are (next_item loads
    them with the row it locks), else fetched in one query."""
    loaded = all(Item._meta.get_field(name).is_cached(item) for name in ("head", "relation", "tail", "campaign"))
    if loaded:
        return item
    return Item.objects.select_related("head", "tail", "relation", "campaign").get(pk=item.pk)


def item_view(item: Item) -> ItemView:
    item = _with_related(item)
    return ItemView(
        item_question(item), EntityView.of(item.head), item.relation.key, item.relation.text,
        EntityView.of(item.tail), origin_triples(item),
    )


def claimed_item_view(item: Item, template: str | None = None, origins: list[OriginTriple] | None = None) -> ItemView:
    """``item_view`` of an item whose head, relation and tail are loaded, and whose question template was read
    with its claim (``services/hand_out_sql``; None: read here, one query), as were its origins (None: one query)."""
    if template is None:
        template = template_text(item.relation, item.campaign)
    return ItemView(
        safe_question(template, item.relation, item.head.name or item.head.key, item.tail.name or item.tail.key),
        EntityView.of(item.head), item.relation.key, item.relation.text, EntityView.of(item.tail),
        origin_triples_joined(item) if origins is None else origins,
    )


def open_handout(campaign: Campaign, user, item_id: int, kind: str = Assignment.Kind.JUDGE,
                 *, now: datetime | None = None) -> Assignment | None:
    """The user's open, unexpired hand-out of item ``item_id`` in the campaign (None: not theirs to see)."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(item_id=item_id, item__campaign=campaign, user=user, kind=kind,
                                  state=Assignment.State.OPEN, expires_at__gt=now)
        .select_related("item")
        .first()
    )


def hand_out_in(campaign: Campaign, hand_out: int, kind: str = Assignment.Kind.JUDGE) -> Assignment | None:
    """The hand-out ``hand_out`` (any user, any state) of the campaign, of ``kind``; None when there is none."""
    return (
        Assignment.objects.filter(pk=hand_out, item__campaign=campaign, kind=kind)
        .select_related("item")
        .first()
    )


def is_open(assignment: Assignment, *, now: datetime | None = None) -> bool:
    return assignment.state == Assignment.State.OPEN and assignment.expires_at > (now or timezone.now())


def own_judgment(item_id: int, user) -> Judgment | None:
    return Judgment.objects.filter(item_id=item_id, user=user).first()


def adjudication_answers(item: Item) -> list[dict]:
    """Both judgments of a conflict for its adjudicator (annotators as A, B: names are not needed to decide)."""
    answers = []
    for n, j in enumerate(Judgment.objects.filter(item=item).order_by("given_at", "pk")):
        answers.append({
            "annotator": chr(ord("A") + n), "answer": j.answer, "answer_display": j.get_answer_display(),
            "source_url": j.source_url, "source_domain": j.source_domain, "quote": j.quote,
        })
    return answers


def safe_link(url: str) -> str:
    """``url`` when it is an http(s) link (what a source URL must be), else '' (never a javascript: link)."""
    return url if urlsplit(url or "").scheme in ("http", "https") else ""


def adjudication_evidence(item: Item) -> dict:
    """The adjudication page's view of ``selectors.quality.adjudication_case``: both annotators' evidence side
    by side (annotators as A, B), each source as a safe link, and the consistency flags explained."""
    from annotation.selectors.quality import adjudication_case

    case = adjudication_case(item)
    evidence = []
    for n, e in enumerate(case.evidence):
        evidence.append({
            "annotator": chr(ord("A") + n), "answer": e.answer,
            "answer_display": dict(Judgment._meta.get_field("answer").choices).get(e.answer, e.answer),
            "source_url": e.source_url, "link": safe_link(e.source_url), "source_domain": e.source_domain,
            "quote": e.quote, "given_at": e.given_at,
            "seconds": None if e.time_on_task_ms is None else round(e.time_on_task_ms / 1000, 1),
        })
    return {"evidence": evidence, "flags": case.flags}


RECENT_SOURCES = 8
_RECENT_ROWS = 50  # judgments read to find that many distinct sources (most people reuse a handful of pages)


def recent_sources(campaign: Campaign, user, limit: int = RECENT_SOURCES) -> list[str]:
    """The user's last distinct source URLs in the campaign, most recent first (answers given without a source
    left out): the judge page's recent-sources list and its "reuse the last source" key. One query."""
    rows = (Judgment.objects.filter(user=user, item__campaign=campaign).exclude(source_url="")
            .order_by("-given_at", "-pk").values_list("source_url", flat=True)[:_RECENT_ROWS])
    return list(dict.fromkeys(rows))[:limit]


def source_start(url: str) -> str:
    """Scheme, host and first path segment of ``url`` (``https://en.wikipedia.org/wiki/``), offered in the source
    field when the person goes to it; '' for ''."""
    if not url:
        return ""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    path = f"/{segments[0]}/" if len(segments) >= 2 else "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def entity_source(url: str, allowed_domains: list[str]) -> str:
    """An entity's own page (e.g. its Wikipedia article) when it is a source the campaign accepts, else ''."""
    try:
        return check_source(url, allowed_domains).url if url else ""
    except SourceError:
        return ""


@dataclass
class Progress:
    """One person's progress in a campaign and the campaign's overall progress.

    The campaign figures an annotator sees must not move with single judgments or decisions: the review read
    the exact "decided" count before and after a submit, and +1 told that the other annotator of the item had
    given the same answer (a last-hour counter told that someone had just judged the item handed next). So
    only staff and campaign admins (``exact``) get the decided count and the campaign's judgments in the last
    hour; everyone else gets ``campaign_percent`` as the share of the judging work done (judgments given /
    judgments needed, whoever gave them and whatever they said), counted up to the start of the hour
    (``campaign_as_of``) and floored to a whole percent, so it changes once an hour with everyone's work of
    that hour, never in answer to one submit."""

    judged: int
    skipped: int
    adjudicated: int
    last_hour: int  # the person's judgments (decisions, adjudicating) in the last 60 minutes
    per_hour: float  # the person's rate over their span of that work (from the first one, at least an hour)
    campaign_total: int  # items to label (gold checks apart): fixed while the campaign runs
    campaign_percent: float  # exact: share of items decided; else the share of the judging done (see above)
    exact: bool  # the campaign figures are exact and live (staff and campaign admins)
    campaign_decided: int | None = None  # exact only
    campaign_last_hour: int | None = None  # exact only: everyone's judgments in the last 60 minutes
    campaign_as_of: datetime | None = None  # not exact: the hour the campaign figure stands at
    # exact only: the decided items split by who decided them, so that the rules' automatic negatives (and labels
    # imported or reused) do not look like people's work (issue 15: the bar stood at 76.9% before anyone judged)
    campaign_automatic: int | None = None  # labelled without people: rules, imports, reuse
    campaign_people_percent: float | None = None  # share of the items left to people that people decided
    work: str = Assignment.Kind.JUDGE  # what last_hour and per_hour count (the page's work): judgments or decisions

    def as_dict(self) -> dict:
        """The API's progress (judging figures; the work they count is the endpoint's, not a field)."""
        return {name: value for name, value in self.__dict__.items() if name != "work"}


def _hour_start(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0)


def _judging_done_percent(campaign: Campaign, counts: dict[str, int], as_of: datetime) -> float:
    """Judgments given on the campaign's items (gold checks apart) before ``as_of``, as a whole percent of the
    judgments its items need (``judgments_per_item`` each; items labelled by a rule or elsewhere need none)."""
    needing = counts["total"] - counts[Item.Status.AUTO_NEGATIVE] - counts[Item.Status.IMPORTED]
    needed = needing * campaign.judgments_per_item
    if needed <= 0:
        return 0.0
    given = Judgment.objects.filter(item__campaign=campaign, item__is_gold=False, given_at__lt=as_of).count()
    return float(min(100, 100 * given // needed))


def progress(campaign: Campaign, user, *, now: datetime | None = None, counts: ItemCounts | None = None,
             work: str = Assignment.Kind.JUDGE) -> Progress:
    """``counts``: the campaign's ``item_counts`` when the caller has them (one grouped query otherwise);
    ``work``: what the person's rate counts, their judgments or (``Assignment.Kind.ADJUDICATE``, the adjudication
    pages) their decisions."""
    now = now or timezone.now()
    mine = Judgment.objects.filter(user=user, item__campaign=campaign)
    judged = mine.count()
    skipped = Assignment.objects.filter(user=user, item__campaign=campaign, kind=Assignment.Kind.JUDGE,
                                        state=Assignment.State.SKIPPED).count()
    decisions = Adjudication.objects.filter(adjudicator=user, item__campaign=campaign)
    adjudicated = decisions.count()
    hour_ago = now - timedelta(hours=1)
    if work == Assignment.Kind.ADJUDICATE:
        done, at, count = decisions, "decided_at", adjudicated
    else:
        done, at, count = mine, "given_at", judged
    last_hour = done.filter(**{f"{at}__gt": hour_ago}).count()
    per_hour = 0.0
    if count:
        first = done.order_by(at).values_list(at, flat=True).first()
        per_hour = count / max((now - first).total_seconds() / 3600, 1.0)
    item_figures = counts if counts is not None else item_counts(campaign)
    counts = campaign_progress(campaign, item_figures)
    total = counts["total"]
    own = (judged, skipped, adjudicated, last_hour, round(per_hour, 1), total)
    if not can_manage(campaign, user):
        as_of = _hour_start(now)
        return Progress(*own, _judging_done_percent(campaign, counts, as_of), exact=False, campaign_as_of=as_of,
                        work=work)
    decided = sum(counts[s] for s in FINAL_STATUSES)
    automatic = item_figures.automatic
    for_people = total - automatic
    return Progress(
        *own, round(100 * decided / total, 1) if total else 0.0, exact=True, campaign_decided=decided,
        campaign_last_hour=Judgment.objects.filter(item__campaign=campaign, given_at__gt=hour_ago).count(),
        campaign_automatic=automatic,
        campaign_people_percent=round(100 * (decided - automatic) / for_people, 1) if for_people else 0.0,
        work=work,
    )


@dataclass(frozen=True)
class CampaignRow:
    campaign: Campaign
    roles: list[str]
    manage: bool


def campaigns_for(user) -> list[CampaignRow]:
    """The user's campaigns with their roles (staff and superusers: every campaign, to manage)."""
    roles: dict[int, list[str]] = {}
    for campaign_id, role in Membership.objects.filter(user=user).order_by("role").values_list("campaign_id", "role"):
        roles.setdefault(campaign_id, []).append(role)
    everything = getattr(user, "is_staff", False) or getattr(user, "is_superuser", False)
    campaigns = Campaign.objects.select_related("pool__sample__kg").order_by("name")
    if not everything:
        campaigns = campaigns.filter(pk__in=list(roles))
    rows = []
    for campaign in campaigns:
        mine = roles.get(campaign.pk, [])
        manage = getattr(user, "is_staff", False) or getattr(user, "is_superuser", False) or Role.ADMIN in mine
        rows.append(CampaignRow(campaign, mine, manage))
    return rows


def status_counts(campaign: Campaign, counts: ItemCounts | None = None) -> list[tuple[str, str, int]]:
    """(status, label, count) in workflow order, gold checks apart (from ``counts`` when given)."""
    counts = campaign_progress(campaign, counts)
    labels = dict(Item.Status.choices)
    return [(s, labels[s], counts[s]) for s in STATUS_ORDER]


def member_rows(campaign: Campaign) -> list[dict]:
    """Members with their roles and how much they did."""
    judged = dict(
        Judgment.objects.filter(item__campaign=campaign).values("user_id").annotate(n=Count("id")).values_list("user_id", "n")
    )
    adjudicated = dict(
        Adjudication.objects.filter(item__campaign=campaign).values("adjudicator_id").annotate(n=Count("id"))
        .values_list("adjudicator_id", "n")
    )
    rows: dict[int, dict] = {}
    for m in Membership.objects.filter(campaign=campaign).select_related("user").order_by("user__username", "role"):
        row = rows.setdefault(m.user_id, {"user": m.user, "roles": [], "judged": judged.get(m.user_id, 0),
                                          "adjudicated": adjudicated.get(m.user_id, 0)})
        row["roles"].append(m.role)
    return list(rows.values())


def relation_item_counts(campaign: Campaign) -> dict[int, int]:
    """relation pk -> items of the campaign (gold apart)."""
    return dict(
        Item.objects.filter(campaign=campaign, is_gold=False).values("relation_id").annotate(n=Count("id"))
        .values_list("relation_id", "n")
    )
