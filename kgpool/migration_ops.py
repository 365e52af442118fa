"""Migration operations shared by the apps."""
from __future__ import annotations

from django.db import migrations


def drop_field_indexes(app_label: str, fields: list[tuple[str, str]]) -> migrations.RunPython:
    """Drop the index Django made for each (model, field) (a ForeignKey's db_index), by the name Django gave it.

    Paired with the AlterFields (db_index=False) in a SeparateDatabaseAndState: on SQLite, AlterField copies the
    whole table to drop one index (minutes for a graph of millions of triples); this drops only the index."""

    def names(apps, schema_editor):
        for model_name, field_name in fields:
            model = apps.get_model(app_label, model_name)
            column = model._meta.get_field(field_name).column
            table = model._meta.db_table
            yield table, column, schema_editor._create_index_name(table, [column])

    def forward(apps, schema_editor):
        for _table, _column, name in names(apps, schema_editor):
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")

    def backward(apps, schema_editor):
        quote = schema_editor.quote_name
        for table, column, name in names(apps, schema_editor):
            schema_editor.execute(f"CREATE INDEX {quote(name)} ON {quote(table)} ({quote(column)})")

    return migrations.RunPython(forward, backward)
