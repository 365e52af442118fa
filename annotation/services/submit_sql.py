"""Writes: the API's submit request in few queries on PostgreSQL (issue 21), with ``submit_judgment``'s rules
and guarantees (the same checks and decision: ``services/judging``'s steps).

In one transaction: (1) the item of the hand-out locked (waiting, like ``submit_judgment``), with the campaign's
settings, its KG, whether the user is an annotator, the hand-out and the judgments ``submit_judgment`` reads in
the same query (``_locked_item``: valid when the item did not change while the query waited for its lock, else
(2) read again after the lock, one query); (3) one statement that stores the
judgment and its history row, closes the hand-out and saves the item's counters and derived state. After the
transaction, the consistency check as before, given the facts (1) read that a submit cannot change
(``consistency.KnownFacts``): it runs its statement only when something there can contradict the answer.
Other databases take ``submit_judgment`` itself.
"""
from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache

from django.db import connections, router, transaction
from django.db.models import Model
from django.utils import timezone

from annotation.models import Assignment, Campaign, Item, Judgment, LabelVersion, Membership, Role
from annotation.services import hot_rows
from annotation.services.answers import check_comment, parse_answer
from annotation.services.consistency import KnownFacts
from annotation.services.judging import after_judgment, earlier_judgment, new_judgment, settle
from annotation.services.label_history import submitted_version
from kgpool.rawrows import columns, from_row, width
from kgpool.security import OfferedToken, token_user_from_row, token_user_sql
from pooling.models import KnowledgeGraph, Pool, Sample, Triple

_JUDGMENT_FIELDS = list(Judgment._meta.concrete_fields)


def submit_for_api(name: str, hand_out: int, user, answer: str | bool, source_url: str, *, quote: str = "",
                   client_time_ms: int | None = None, request_id: str = "",
                   now: datetime | None = None) -> tuple[Judgment, bool] | None:
    """``submit_judgment`` for the API's hand-out ``hand_out`` of the campaign called ``name``: (the judgment,
    whether it was recorded before: a repeat). None when the caller must take the previous path: not PostgreSQL,
    or not the user's judging hand-out in a campaign where they are an annotator, or an offered token that is no
    active user's (that path gives the 401 / 404 / 403). ``user``: a user, or an ``OfferedToken`` checked in the
    first statement (the judgment's ``user`` is then the token's)."""
    connection = connections[router.db_for_write(Item)]
    if connection.vendor != "postgresql":
        return None
    now = now or timezone.now()
    request_id = (request_id or "").strip()
    with transaction.atomic():
        locked = _locked_item(name, hand_out, user, request_id)
        if locked is None:
            return None
        user = locked.caller
        answer = parse_answer(answer, cant_tell=True)  # after the access checks, as on the previous path (403 before 400)
        check_comment(answer, quote)
        campaign = locked.campaign
        read = _snapshot_reads(locked, hand_out, user)
        if read is None:  # the item changed while this request waited for its lock: read again, after the lock
            read = _hand_out_and_judgments(connection, locked, hand_out, user, request_id)
        assignment, rows = read
        earlier, source = earlier_judgment(rows, locked, user, answer, source_url, request_id, campaign)
        if earlier is not None:
            recorded = Judgment.objects.get(pk=earlier.pk)  # the whole recorded judgment (a repeat: rare)
            recorded.user = user
            return recorded, True
        judgment = new_judgment(locked, user, assignment, answer, source, quote, client_time_ms, request_id, now)
        settle(locked, assignment, rows, answer, campaign, now)
        _write(connection, judgment, submitted_version(judgment, now), assignment, locked, now)
    after_judgment(judgment, locked, campaign)
    return judgment, False


def _locked_item(name: str, hand_out: int, caller, request_id: str) -> Item | None:
    """The item of the caller's judging hand-out ``hand_out`` in campaign ``name``, locked (waiting), its campaign
    (with pool, sample and KG, for the consistency check) as it is now; None unless the hand-out is the caller's
    and they are an annotator of the campaign. ``caller``: a user, or an ``OfferedToken`` checked in this
    statement (its active user must be the hand-out's); the user is ``locked.caller``.

    The same statement reads, from its snapshot (taken before it waited for the lock), the hand-out's state and
    the judgments ``judgments_to_read`` names (``hand_out_state``, ``judged``), and the item row's version in that
    snapshot next to the locked one (``xmin``). Every judgment of an item and every closing of one of its
    hand-outs changes the item's row (its counters count them), so when the two versions are one, nothing the
    submit reads changed before the lock was granted and the snapshot's reads hold (the caller reads again
    otherwise). Plain SQL from the models' tables: the ORM's building and compiling cost more CPU than the query."""
    connection = connections[router.db_for_write(Item)]
    offered = isinstance(caller, OfferedToken)
    if offered:  # the hand-out's user in the statement, which the token's join checks
        params = [Role.ANNOTATOR, *([request_id] if request_id else []), caller.key, name, hand_out,
                  Assignment.Kind.JUDGE]
    else:
        params = [caller.pk, Role.ANNOTATOR, caller.pk, *([caller.pk, request_id] if request_id else []), name,
                  hand_out, Assignment.Kind.JUDGE]
    with connection.cursor() as cursor:
        cursor.execute(_locked_item_sql(bool(request_id), offered), params)
        row = cursor.fetchone()
    if row is None:
        return None
    instances, at = [], 0
    for model in _LOADED:
        leave_out = hot_rows.left_out(model)
        columns_of_model = width(model, leave_out)
        instances.append(from_row(connection, model, row[at:at + columns_of_model], leave_out))
        at += columns_of_model
    locked, campaign, pool, sample, kg = instances
    rest = row[at:]
    if offered:
        caller, _token, rest = token_user_from_row(connection, rest)
    hand_out_user, annotator, *rest = rest
    if hand_out_user != caller.pk or not annotator:
        return None
    sample.kg, pool.sample, campaign.pool, locked.campaign = kg, sample, pool, campaign
    locked.caller = caller
    locked.hand_out_state, locked.handed_out_at, locked.expires_at, locked.judged = rest[:4]
    locked.locked_version, locked.snapshot_version = rest[4:6]
    splits, shared_elsewhere = rest[6:]
    locked.known_facts = KnownFacts(tuple(splits or ()), bool(shared_elsewhere))  # for the consistency check
    return locked


#: the rows _locked_item loads, in its column order (without the columns of hot_rows.left_out)
_LOADED = (Item, Campaign, Pool, Sample, KnowledgeGraph)


@lru_cache(maxsize=4)
def _locked_item_sql(by_request_id: bool, by_token: bool) -> str:
    tables = ("i", "c", "p", "s", "kg")
    loaded = ", ".join(columns(model, alias, hot_rows.left_out(model)) for model, alias in zip(_LOADED, tables))
    token_columns, token_joins = token_user_sql("a.user_id") if by_token else ("", "")
    user = "a.user_id" if by_token else "%s"  # the token's join makes the hand-out's user the caller
    item, judgment = Item._meta.db_table, Judgment._meta.db_table
    judged = ", ".join(f"'{c}', j.{c}" for c in _READ)
    # Undone answers no longer count (Judgment.objects). The item's judgments and the user's judgment with the
    # request id are two index look-ups joined by UNION (which also drops a judgment both find): OR-ed in one
    # condition, PostgreSQL walked every judgment of the user (5 ms and growing at 15,000 judgments).
    read = (f"SELECT jsonb_build_object({judged})::text FROM {judgment} j JOIN {item} gi ON gi.id = j.item_id "
            f"WHERE j.withdrawn_at IS NULL AND j.item_id = i.id AND (j.user_id = {user} OR NOT gi.is_gold)")
    if by_request_id:  # request_id <> '': the condition of the (user, request_id) index, so it is used
        read += (f" UNION SELECT jsonb_build_object({judged})::text FROM {judgment} j WHERE j.withdrawn_at IS NULL "
                 f"AND j.user_id = {user} AND j.request_id = %s AND NOT (j.request_id = '')")
    # the consistency check's facts that a submit cannot change (consistency.KnownFacts)
    kg_states = (f"SELECT DISTINCT kt.split FROM {Triple._meta.db_table} kt WHERE kt.kg_id = s.kg_id "
                 f"AND kt.head_id = i.head_id AND kt.relation_id = i.relation_id AND kt.tail_id = i.tail_id")
    elsewhere = (f"SELECT 1 FROM {item} oi JOIN {Campaign._meta.db_table} oc ON oc.id = oi.campaign_id "
                 f"JOIN {Pool._meta.db_table} op ON op.id = oc.pool_id JOIN {Sample._meta.db_table} os "
                 f"ON os.id = op.sample_id WHERE oi.head_id = i.head_id AND oi.relation_id = i.relation_id "
                 f"AND oi.tail_id = i.tail_id AND oi.campaign_id <> i.campaign_id AND NOT oi.is_gold "
                 f"AND os.kg_id = s.kg_id")
    return (
        f"SELECT {loaded}, {token_columns + ', ' if by_token else ''}a.user_id, "
        f"EXISTS (SELECT 1 FROM {Membership._meta.db_table} m WHERE m.campaign_id = i.campaign_id "
        f"AND m.user_id = {user} AND m.role = %s), "
        f"a.state, a.handed_out_at, a.expires_at, "
        f"ARRAY({read}), "
        f"i.xmin::text, (SELECT xmin::text FROM {item} AS snapshot WHERE snapshot.id = i.id), "
        f"ARRAY({kg_states}), EXISTS ({elsewhere}) "
        f"FROM {item} i JOIN {Campaign._meta.db_table} c ON c.id = i.campaign_id "
        f"JOIN {Assignment._meta.db_table} a ON a.item_id = i.id {token_joins} "
        f"JOIN {Pool._meta.db_table} p ON p.id = c.pool_id JOIN {Sample._meta.db_table} s ON s.id = p.sample_id "
        f"JOIN {KnowledgeGraph._meta.db_table} kg ON kg.id = s.kg_id "
        f"WHERE c.name = %s AND a.id = %s AND a.kind = %s FOR UPDATE OF i"
    )


#: the judgment columns a submit decides on (a repeat re-reads its whole judgment)
_READ = ("id", "item_id", "user_id", "request_id", "answer", "source_url")


def _snapshot_reads(locked: Item, hand_out: int, user) -> tuple[Assignment, list[Judgment]] | None:
    """The hand-out and judgments read with the lock (``_locked_item``), when they hold; None otherwise."""
    if locked.locked_version != locked.snapshot_version:
        return None
    assignment = Assignment(pk=hand_out, item=locked, user=user, kind=Assignment.Kind.JUDGE,
                            state=locked.hand_out_state, handed_out_at=locked.handed_out_at,
                            expires_at=locked.expires_at)
    rows = []
    for row in locked.judged or []:
        values = json.loads(row) if isinstance(row, str) else row
        rows.append(Judgment(**{("pk" if c == "id" else c): values[c] for c in _READ}))
    return assignment, rows


def _hand_out_and_judgments(connection, locked: Item, hand_out: int, user,
                            request_id: str) -> tuple[Assignment, list[Judgment]]:
    """Read after the item's lock (a later statement sees what the transactions before it committed): the
    hand-out as it is now and ``judgments_to_read``'s judgments, one row per judgment (one with no judgment)."""
    mine = "j.item_id = a.item_id" + (" AND j.user_id = a.user_id" if locked.is_gold else "")
    if request_id:
        mine = f"({mine}) OR (j.user_id = a.user_id AND j.request_id = %s)"
    mine = f"j.withdrawn_at IS NULL AND ({mine})"  # undone answers no longer count (Judgment.objects)
    columns = ", ".join(f"j.{f.column}" for f in _JUDGMENT_FIELDS)
    sql = (f"SELECT a.state, a.handed_out_at, a.expires_at, {columns} FROM {Assignment._meta.db_table} a "
           f"LEFT JOIN {Judgment._meta.db_table} j ON {mine} WHERE a.id = %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [request_id, hand_out] if request_id else [hand_out])
        fetched = cursor.fetchall()
    state, handed_out_at, expires_at = fetched[0][:3]
    assignment = Assignment(pk=hand_out, item=locked, user=user, kind=Assignment.Kind.JUDGE, state=state,
                            handed_out_at=handed_out_at, expires_at=expires_at)
    names = [f.attname for f in _JUDGMENT_FIELDS]
    rows = [Judgment.from_db(connection.alias, names, row[3:]) for row in fetched if row[3] is not None]
    return assignment, rows


def _insert(connection, obj: Model, name: str, replace: dict[str, str] | None = None) -> tuple[str, list]:
    """``name AS (INSERT INTO <obj's table> ... RETURNING id)`` with obj's field values (``replace``: column ->
    SQL instead of a value)."""
    replace = replace or {}
    fields = [f for f in obj._meta.concrete_fields if not f.primary_key]
    values, params = [], []
    for f in fields:
        if f.column in replace:
            values.append(replace[f.column])
        else:
            values.append("%s")
            params.append(f.get_db_prep_save(f.pre_save(obj, True), connection))
    columns = ", ".join(f.column for f in fields)
    return (f"{name} AS (INSERT INTO {obj._meta.db_table} ({columns}) VALUES ({', '.join(values)}) RETURNING id)",
            params)


def _write(connection, judgment: Judgment, version: LabelVersion, assignment: Assignment, locked: Item,
           now: datetime) -> None:
    """One statement: the judgment, its history row, the hand-out closed, the item's counters and state."""
    judgment_sql, judgment_params = _insert(connection, judgment, "stored")
    version_sql, version_params = _insert(connection, version, "versioned",
                                          {"judgment_id": "(SELECT id FROM stored)"})
    locked.updated_at = now
    sql = (
        f"WITH {judgment_sql}, {version_sql}, "
        f"closed AS (UPDATE {Assignment._meta.db_table} SET state = %s, closed_at = %s WHERE id = %s), "
        f"saved AS (UPDATE {Item._meta.db_table} SET num_judgments = %s, status = %s, label = %s, label_origin = %s, "
        f"updated_at = %s WHERE id = %s) "
        f"SELECT id FROM stored"
    )
    params = [*judgment_params, *version_params, assignment.state, assignment.closed_at, assignment.pk,
              locked.num_judgments, locked.status, locked.label, locked.label_origin, now, locked.pk]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        judgment.pk = cursor.fetchone()[0]
    judgment._state.adding = False
