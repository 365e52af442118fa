"""Writes: the API's next-item request in few queries (issue 21), with the guarantees of ``services/distribution``.

``hand_out_for_api`` runs, in one transaction: (1) the user's annotator membership row locked, with the campaign's
settings read fresh in the same query (the role check, the per-user serialisation of ``lock_member`` and the
settings in one statement: nothing to cache or invalidate); (2) on PostgreSQL one statement that picks the queue
head exactly as ``_first_free_item`` does (the same compiled level queries, ``FOR UPDATE SKIP LOCKED``), opens
the hand-out, counts it on the item and returns what the item shows (entities, relation, question template and
origins: ``selectors/web.origins_query``), unless the user holds an open hand-out already.
Other databases, budgeted campaigns and the rare cases (own open hand-out back) take ``next_item`` itself.

``KGPOOL_JUDGING_PATH=legacy`` (settings) keeps the views on the previous code path, for the load benchmark's
comparison (bench/load_annotation.py --paths legacy drf fast).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, connections, router, transaction
from django.utils import timezone

from annotation.models import Assignment, Campaign, Item, Membership, QuestionTemplate, Role
from annotation.selectors._compiled import compiled, queryset_sql
from annotation.selectors.campaigns import remember_roles
from annotation.selectors.templates import generated_template
from annotation.selectors.web import (
    ORIGIN_COLUMNS,
    ORIGINS_SHOWN,
    ItemView,
    OriginTriple,
    claimed_item_view,
    item_view,
    origins_from_rows,
    origins_query,
)
from annotation.services import hot_rows
from annotation.services._locking import lock_skipping
from annotation.services.distribution import (
    RETRIES,
    _release_due,
    next_item,
    open_assignment,
    open_hand_outs,
    queue_levels,
    release_expired,
)
from kgpool.rawrows import columns, from_row, width
from kgpool.security import OfferedToken, token_user_from_row, token_user_id_sql, token_user_sql
from pooling.models import Entity, Relation

LEGACY = "legacy"


def fast_path() -> bool:
    """Whether the API's judging requests take the few-query path (default) or the previous one."""
    return getattr(settings, "KGPOOL_JUDGING_PATH", "fast") != LEGACY


@dataclass
class HandOut:
    campaign: Campaign
    assignment: Assignment | None  # None: nothing left for the user
    view: ItemView | None
    user: object = None  # the caller (checked from their offered token when they offered one)


def locked_annotator_campaign(name: str, caller) -> tuple[Campaign, object] | None:
    """Inside a transaction: (the campaign called ``name`` as its row is now, the caller) when the caller is one of
    its annotators, with their annotator membership row locked until the transaction ends (``lock_member``); None
    when there is no such campaign, they are not its annotator, or an offered token is no active user's (the
    caller answers 401 / 404 / 403). ``caller``: a user, or an ``OfferedToken`` (PostgreSQL), checked here."""
    connection = connections[router.db_for_write(Membership)]
    offered = isinstance(caller, OfferedToken)
    if connection.vendor != "postgresql":  # SQLite: no row locks, and its raw rows need the ORM's conversions
        if offered:
            return None  # the view checks the token as DRF does, then comes back with the user
        rows = Membership.objects.select_related("campaign").filter(campaign__name=name, user=caller, role=Role.ANNOTATOR)
        membership = rows.order_by().first()
        return None if membership is None else (membership.campaign, caller)
    tables = f"{Membership._meta.db_table} m JOIN {Campaign._meta.db_table} c ON c.id = m.campaign_id"
    leave_out = hot_rows.left_out(Campaign)
    if offered:  # the token checked in this statement, not by a lookup of its own
        token_columns, token_joins = token_user_sql("m.user_id")
        # The token's user as a sub-select (run once, first) makes the membership a unique-index look-up. Joined
        # only, PostgreSQL may walk every annotator of the campaign and test each one's token: it did on tables
        # never analysed (autovacuum off), 0.65 ms at 460 annotators and growing with them.
        sql = (f"SELECT {columns(Campaign, 'c', leave_out)}, {token_columns} FROM {tables} {token_joins} "
               f"WHERE c.name = %s AND m.role = %s AND m.user_id = ({token_user_id_sql()}) FOR UPDATE OF m")
        params = [caller.key, name, Role.ANNOTATOR, caller.key]
    else:
        sql = (f"SELECT {columns(Campaign, 'c', leave_out)} FROM {tables} "
               f"WHERE c.name = %s AND m.user_id = %s AND m.role = %s FOR UPDATE OF m")
        params = [name, caller.pk, Role.ANNOTATOR]  # plain SQL: the ORM costs more CPU
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    loaded = width(Campaign, leave_out)
    campaign = from_row(connection, Campaign, row[:loaded], leave_out)
    user = token_user_from_row(connection, row[loaded:])[0] if offered else caller
    return campaign, user


def hand_out_for_api(name: str, caller, *, now: datetime | None = None) -> HandOut | None:
    """``next_item`` for the API by campaign name, with the item's view; None when the caller (a user, or an
    ``OfferedToken`` checked in the first statement) is no annotator of a campaign called ``name``."""
    now = now or timezone.now()
    postgres = connections[router.db_for_write(Item)].vendor == "postgresql"
    for _attempt in range(RETRIES):
        try:
            with transaction.atomic():
                found = locked_annotator_campaign(name, caller)
                if found is None:
                    return None
                campaign, user = found
                caller = user  # a retry needs no token check again
                if not postgres or campaign.item_budget is not None:
                    remember_roles(campaign, user, {Role.ANNOTATOR})  # the only role next_item asks about
                    assignment = next_item(campaign, user, now=now)  # nests: the membership lock is held already
                    return HandOut(campaign, assignment, _view(assignment), user)
                if _release_due(campaign, now):
                    release_expired(campaign, now=now)
                claimed = _claim(campaign, user, now)
                if claimed is None:  # the user's own open hand-out comes back first (a reload)
                    assignment = open_assignment(campaign, user, now=now)
                    return HandOut(campaign, assignment, item_view(assignment.item) if assignment else None, user)
                assignment, template, origins = claimed
                if assignment is None:
                    return HandOut(campaign, None, None, user)
                return HandOut(campaign, assignment, claimed_item_view(assignment.item, template, origins), user)
        except IntegrityError:
            continue  # the same user took this item in a concurrent request: again (their hand-out comes back)
    campaign = Campaign.objects.get(name=name)
    assignment = open_assignment(campaign, caller, now=now)
    return HandOut(campaign, assignment, item_view(assignment.item) if assignment else None, caller)


_ENTITY = ("id", "key", "name", "description", "types", "url", "wikidata_id")


def _claim(campaign: Campaign, user, now: datetime) -> tuple[Assignment | None, str, list[OriginTriple]] | None:
    """One statement (PostgreSQL): lock the queue head (``_first_free_item``'s levels, each run only when the
    ones before found nothing), open the hand-out and count it on the item; returns (the hand-out with its
    item, head, relation and tail loaded, the question template in force, the item's origins), (None, '', [])
    when nothing is left, None when the user holds an open hand-out (nothing written)."""
    connection = connections[router.db_for_write(Item)]
    expires_at = now + timedelta(seconds=campaign.assignment_timeout_s)
    limit = campaign.judgments_per_item  # the number of queue levels: part of the statement's shape
    sql, params = compiled(("claim", connection.alias, limit), partial(_claim_sql, limit=limit),
                           campaign.pk, user.pk, now, expires_at)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    own, opened, item_id, entry_id, relation_id, relation_key, relation_text, kg_id = row[:8]
    if own is not None:
        return None
    if opened is None:
        return None, "", []
    n = len(_ENTITY)
    head_entity, tail_entity = (_entity(kg_id, row[start:start + n]) for start in (8, 8 + n))
    rel = Relation(pk=relation_id, kg_id=kg_id, key=relation_key, text=relation_text)
    campaign_text, kg_text = row[8 + 2 * n], row[9 + 2 * n]
    claimed = Item(pk=item_id, campaign=campaign, entry_id=entry_id, head=head_entity, relation=rel, tail=tail_entity)
    hand_out = Assignment(pk=opened, item=claimed, user=user, kind=Assignment.Kind.JUDGE,
                          state=Assignment.State.OPEN, handed_out_at=now, expires_at=expires_at)
    text = campaign_text if campaign_text is not None else kg_text if kg_text is not None else generated_template(rel)
    origins = origins_from_rows([json.loads(origin) for origin in row[10 + 2 * n]], ORIGINS_SHOWN)
    return hand_out, text, origins


def _claim_sql(campaign_id: int, user_id: int, now: datetime, expires_at: datetime, *, limit: int) -> tuple[str, list]:
    """The claim statement (built once per process and number of queue levels: ``compiled``)."""
    sql, params = [], []

    def cte(name: str, queryset, gate: list[str]) -> None:
        inner, inner_params = queryset_sql(queryset)
        where = " AND ".join(f"NOT EXISTS (SELECT 1 FROM {g})" for g in gate)
        sql.append(f"{name} AS (SELECT * FROM ({inner}) {name}_q" + (f" WHERE {where})" if where else ")"))
        params.extend(inner_params)

    cte("own", open_hand_outs(campaign_id, user_id, now).values("pk")[:1], [])
    queue = queue_levels(campaign_id, user_id, limit)
    levels = [f"level{n}" for n in range(len(queue))]
    for n, level in enumerate(queue):
        cte(levels[n], lock_skipping(level.values("pk"))[:1], ["own", *levels[:n]])
    item, assignment = Item._meta.db_table, Assignment._meta.db_table
    entity, relation, template = Entity._meta.db_table, Relation._meta.db_table, QuestionTemplate._meta.db_table
    head = " UNION ALL ".join(f"SELECT pk AS id FROM {level}" for level in levels)  # values("pk") names it pk
    sql.append(f"head AS ({head})")
    sql.append(f"opened AS (INSERT INTO {assignment} (item_id, user_id, kind, state, handed_out_at, expires_at) "
               f"SELECT id, %s, %s, %s, %s, %s FROM head RETURNING id, item_id)")
    params += [user_id, Assignment.Kind.JUDGE, Assignment.State.OPEN, now, expires_at]
    sql.append(f"counted AS (UPDATE {item} SET num_active = {item}.num_active + 1, status = %s, updated_at = %s "
               f"FROM head WHERE {item}.id = head.id RETURNING {item}.id)")
    params += [Item.Status.IN_PROGRESS, now]
    columns = ", ".join([*(f"h.{c}" for c in _ENTITY), *(f"t.{c}" for c in _ENTITY)])
    # the claimed item's origins, read by the same statement (one round trip less per request)
    item_columns = {"campaign": "i.campaign_id", "relation": "i.relation_id", "head": "i.head_id", "tail": "i.tail_id",
                    "entry": "i.entry_id"}
    origins, origin_params = origins_query(item_columns, {}, hits=True, limit=ORIGINS_SHOWN)
    origin_columns = ", ".join(f"o.c{n}" for n in range(ORIGIN_COLUMNS))
    query = (
        f"WITH {', '.join(sql)} "
        f"SELECT (SELECT pk FROM own), opened.id, i.id, i.entry_id, i.relation_id, r.key, r.text, r.kg_id, {columns}, "
        f"(SELECT text FROM {template} WHERE relation_id = i.relation_id AND campaign_id = %s), "
        f"(SELECT text FROM {template} WHERE relation_id = i.relation_id AND campaign_id IS NULL), "
        f"ARRAY(SELECT json_build_array({origin_columns})::text FROM ({origins}) o ORDER BY o.rn), "
        f"(SELECT count(*) FROM counted) "
        f"FROM (SELECT 1) AS one LEFT JOIN opened ON true LEFT JOIN {item} i ON i.id = opened.item_id "
        f"LEFT JOIN {entity} h ON h.id = i.head_id LEFT JOIN {entity} t ON t.id = i.tail_id "
        f"LEFT JOIN {relation} r ON r.id = i.relation_id"
    )
    params.append(campaign_id)
    params += origin_params
    return query, params


def _view(assignment: Assignment | None) -> ItemView | None:
    """The view of a hand-out that ``next_item`` opened (head, relation, tail loaded with its row) or gave back."""
    if assignment is None:
        return None
    item = assignment.item
    if all(Item._meta.get_field(name).is_cached(item) for name in ("head", "relation", "tail", "campaign")):
        return claimed_item_view(item)
    return item_view(item)


def _entity(kg_id: int, values: tuple) -> Entity:
    entity = Entity(kg_id=kg_id, **dict(zip(_ENTITY, values)))
    # a raw cursor gives the JSON column as the driver does (text on PostgreSQL with Django's psycopg set-up)
    entity.types = Entity._meta.get_field("types").from_db_value(entity.types, None, None) or []
    return entity
