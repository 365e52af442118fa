"""No index that another one already provides: every index is updated on every write of its table, and the judging
writes (a claim and a submit per item, issue 21) touch items, hand-outs, judgments and label versions.

An index is redundant when it is neither unique nor partial and its columns are the leading columns of another
full (not partial) index or unique constraint of the same table: that one serves the same lookups, the foreign-key
checks of deletes included."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection, models

PROJECT_APPS = ("pooling", "annotation", "evaluation", "kgpool")


def table_indexes(model: type[models.Model]) -> list[tuple[str, tuple[str, ...], bool, bool]]:
    """(name, columns, unique, partial) of every index the model asks for."""
    meta = model._meta
    column = {f.name: f.column for f in meta.concrete_fields}
    found = [("pk", (meta.pk.column,), True, False)]
    for field in meta.local_concrete_fields:
        if field.primary_key:
            continue
        if field.unique:
            found.append((f"{field.name} (unique)", (field.column,), True, False))
        elif field.db_index:
            found.append((f"{field.name} (field index)", (field.column,), False, False))
    for index in meta.indexes:
        if index.fields:  # expression indexes are left out
            found.append((index.name, tuple(column[f.lstrip("-")] for f in index.fields), False,
                          index.condition is not None))
    for constraint in meta.constraints:
        if isinstance(constraint, models.UniqueConstraint) and constraint.fields:
            found.append((constraint.name, tuple(column[f] for f in constraint.fields), True,
                          constraint.condition is not None))
    for fields in meta.unique_together:
        found.append(("unique_together", tuple(column[f] for f in fields), True, False))
    return found


def redundant(indexes: list[tuple[str, tuple[str, ...], bool, bool]]) -> list[str]:
    out = []
    for name, columns, unique, partial in indexes:
        if unique or partial:
            continue
        for other, other_columns, other_unique, other_partial in indexes:
            if other != name and not other_partial and other_columns[:len(columns)] == columns \
                    and (len(other_columns) > len(columns) or other_unique or other < name):
                out.append(f"{name} {columns} (served by {other} {other_columns})")
                break
    return out


def test_the_rule_finds_a_prefix_and_a_duplicate_but_not_a_partial_or_unique_index():
    indexes = [("pk", ("id",), True, False), ("a", ("campaign_id",), False, False),
               ("b", ("campaign_id", "status"), False, False), ("c", ("entry_id",), False, False),
               ("d", ("entry_id",), False, False), ("e", ("user_id",), False, False),
               ("f", ("user_id", "state"), False, True), ("g", ("item_id",), True, False),
               ("h", ("item_id", "user_id"), True, False), ("i", ("id",), False, False)]
    assert redundant(indexes) == ["a ('campaign_id',) (served by b ('campaign_id', 'status'))",
                                  "d ('entry_id',) (served by c ('entry_id',))",
                                  "i ('id',) (served by pk ('id',))"]


def test_no_model_asks_for_an_index_another_one_provides():
    found = {model._meta.label: redundant(table_indexes(model))
             for app in PROJECT_APPS for model in apps.get_app_config(app).get_models()}
    assert {label: names for label, names in found.items() if names} == {}


@pytest.mark.django_db
def test_the_migrated_database_has_the_indexes_the_models_ask_for():
    """The migrations (kgpool.migration_ops drops the field indexes by Django's own names) leave each table with
    exactly the non-unique indexes its model asks for: none left behind, none dropped by mistake."""
    differ = {}
    with connection.cursor() as cursor:
        for app in PROJECT_APPS:
            for model in apps.get_app_config(app).get_models():
                table = model._meta.db_table
                wanted = sorted(columns for _name, columns, unique, _partial in table_indexes(model) if not unique)
                # (PostgreSQL's "_like" indexes: Django's pattern-ops twin of an indexed text column, for LIKE)
                found = sorted(tuple(info["columns"])
                               for name, info in connection.introspection.get_constraints(cursor, table).items()
                               if info["index"] and not info["unique"] and info["columns"]
                               and not name.endswith("_like"))
                if wanted != found:
                    differ[table] = (wanted, found)
    assert differ == {}
