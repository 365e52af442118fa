"""Fresh query-planner statistics after a bulk load (issue 18)."""
from __future__ import annotations

from django.db import connections, router


def refresh_planner_statistics(*models) -> None:
    """ANALYZE the tables of ``models``. SQLite plans without statistics until ANALYZE: on a 5M-triple KG it
    answered the judge page's known-answers look-up through the (kg, split) index, reading every train triple
    (0.8 s), instead of (tail, relation). ``analysis_limit`` keeps SQLite's ANALYZE to a sample of each index
    (milliseconds); PostgreSQL samples anyway."""
    for model in models:
        connection = connections[router.db_for_write(model)]
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA analysis_limit=1000")
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
