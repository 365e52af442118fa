"""A pool imported without its systems column (hits with no system) exports in every format (issue #13, item 8:
the CSV export used to crash joining a None system name)."""
from __future__ import annotations

import csv
import io
import json

import pytest

from annotation.models import Item, Role
from annotation.services.campaigns import create_campaign
from annotation.services.exports import FORMATS, export_judgments
from annotation.services.imports import import_judgments
from tests._annotation_support import users, write_kg
from tests._pool_support import storage  # noqa: F401

TRAIN = [("e0", "r", "e1"), ("e1", "r", "e2"), ("e2", "s", "e3"), ("e3", "r", "e4"), ("e4", "s", "e5"),
         ("e5", "r", "e6"), ("e6", "s", "e7"), ("e7", "r", "e0")]
VALID = [("e0", "s", "e2")]
TEST = [("e1", "r", "e3"), ("e2", "r", "e5"), ("e4", "s", "e6")]
POOL = ["e1\tr\te5", "e1\tr\te6\t2", "e0\tr\te3\t-"]  # no systems column (and one line without depth)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", FORMATS)
def test_export_of_a_pool_imported_without_systems(tmp_path, storage, fmt):
    from pooling.models import PoolHit
    from pooling.services.kg_import import import_kg
    from pooling.services.pools import import_pool

    kg = import_kg("nosys", write_kg(tmp_path / "kg", TRAIN, VALID, TEST))
    (tmp_path / "pool.tsv").write_text("\n".join(POOL) + "\n")
    (tmp_path / "sample.txt").write_text("0\n1\n2\n")
    pool, counts = import_pool(kg, tmp_path / "pool.tsv", tmp_path / "sample.txt", name="nosys")
    assert counts["entries"] == 3
    assert set(PoolHit.objects.filter(entry__pool=pool).values_list("system", flat=True)) == {None}
    campaign = create_campaign("nosys", pool, gold_rate=0)
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    (tmp_path / "labels.tsv").write_text("".join(f"{line.split(chr(9))[0]}\tr\t{line.split(chr(9))[2]}\tY\n"
                                                 for line in POOL))
    assert import_judgments(campaign, tmp_path / "labels.tsv").labelled == 3
    assert Item.objects.filter(campaign=campaign, label="Y").count() == 3

    out = io.StringIO()
    count = export_judgments(campaign, fmt, out, annotator=annotator if fmt == "qrels-annotator" else None)
    assert count > 0 or fmt == "qrels-annotator"  # nobody judged: the annotator's qrels are empty
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out.getvalue())))
        pooled = [row for row in rows if row["origin"] != "test"]
        assert len(pooled) == 3 and {row["systems"] for row in pooled} == {""}
        assert {row["label"] for row in rows} == {"Y"}
    elif fmt == "jsonl":
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        assert len(records) == 6 and all(record["systems"] == [] for record in records)
