"""Writes: consistency flags on PostgreSQL in three plain statements per item (issue 21), with
``adjudication.flag_for_adjudication``'s rules: the item's row locked (waiting), the flags it lacks added, its state
derived from its facts as they are after the lock (``item_state.recompute_locked``) and saved in one UPDATE when
anything changed. The submit's consistency check flags an item now and then (a second "yes" to a single-answer
question flags two); through the ORM that was seven queries per item and flag, built per call, which made the
flagged submits the costliest requests of the judging API."""
from __future__ import annotations

from django.db import connections, router, transaction
from django.utils import timezone

from annotation.lib.item_state import derive_item_state
from annotation.models import Adjudication, Assignment, Campaign, Item, Judgment
from annotation.services.item_state import apply_state, item_facts
from kgpool.rawrows import columns, from_row

_ITEM = Item._meta.db_table
_LOCK = f"SELECT {columns(Item, 'i')} FROM {_ITEM} i WHERE i.id = %s FOR UPDATE"
# Read after the lock (a later statement sees every transaction that committed before the lock was granted).
# Undone answers no longer count (Judgment.objects); the adjudication of an item is one row at most.
_FACTS = (
    f"SELECT c.judgments_per_item, "
    f"ARRAY(SELECT j.answer FROM {Judgment._meta.db_table} j WHERE j.item_id = %s AND j.withdrawn_at IS NULL "
    f"ORDER BY j.given_at, j.id), "
    f"(SELECT count(*) FROM {Assignment._meta.db_table} a WHERE a.item_id = %s AND a.kind = %s AND a.state = %s), "
    f"(SELECT d.label FROM {Adjudication._meta.db_table} d WHERE d.item_id = %s ORDER BY d.id LIMIT 1) "
    f"FROM {Campaign._meta.db_table} c WHERE c.id = %s"
)
_SAVE = (f"UPDATE {_ITEM} SET flags = %s::jsonb, status = %s, label = %s, label_origin = %s, num_judgments = %s, "
         f"num_active = %s, updated_at = %s WHERE id = %s")


def flag_items(found: dict[int, list[str]]) -> None:
    """Add ``found``'s flags to their items, one item per transaction in primary-key order (never two row locks
    held at once), each item's state derived afresh."""
    connection = connections[router.db_for_write(Item)]
    for pk in sorted(found):
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(_LOCK, [pk])
            row = cursor.fetchone()
            if row is None:
                continue  # gone meanwhile (a deleted campaign): nothing to flag
            item = from_row(connection, Item, row)
            cursor.execute(_FACTS, [pk, pk, Assignment.Kind.JUDGE, Assignment.State.OPEN, pk, item.campaign_id])
            judgments_per_item, answers, open_handouts, adjudication = cursor.fetchone()
            added = [flag for flag in found[pk] if flag not in item.flags]
            item.flags = [*item.flags, *added]
            derived = derive_item_state(item_facts(item, judgments_per_item, answers, open_handouts, adjudication))
            if apply_state(item, derived) or added:
                flags = Item._meta.get_field("flags").get_db_prep_save(item.flags, connection)
                cursor.execute(_SAVE, [flags, item.status, item.label, item.label_origin, item.num_judgments,
                                       item.num_active, timezone.now(), pk])
