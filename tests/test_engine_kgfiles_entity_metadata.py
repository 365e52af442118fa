"""Entity metadata is held only for the entities a metadata file describes (issue 18: one object per entity was a
third of the import's memory at 1 M triples); every other entity reads as its key for a name."""
from __future__ import annotations

import json

import pytest

from pooling.engine.kgfiles import EntityInfo, EntityMetadata, read_kg
from tests.test_engine_kgfiles import SPLITS, write


def test_a_graph_without_metadata_holds_no_object_per_entity(tmp_path):
    data = read_kg(write(tmp_path / "ds", **SPLITS))
    assert [data.entities.stored(key) for key in data.entity_keys] == [None, None, None]
    assert data.entities["b"] == EntityInfo(name="b")  # read as the key, all else empty
    assert list(data.entities) == ["a", "b", "c"] and len(data.entities) == 3
    assert "c" in data.entities and "zzz" not in data.entities
    with pytest.raises(KeyError):
        data.entities["zzz"]


def test_only_described_entities_are_stored_and_an_empty_label_falls_back_to_the_key(tmp_path):
    folder = write(tmp_path / "ds", **SPLITS, **{
        "entity_names.tsv": "a\tAlpha\n",
        "entity_wikidata.json": json.dumps({"b": {"label": "", "description": "second", "wikidata_id": "Q2"},
                                            "nowhere": {"label": "X"}}),
    })
    data = read_kg(folder)
    assert data.entities.stored("a").name == "Alpha"
    b = data.entities.stored("b")
    assert (b.name, b.description, b.wikidata_id) == ("b", "second", "Q2")
    assert data.entities.stored("c") is None and data.entities["c"].name == "c"
    assert data.unused_metadata == 1  # "nowhere" is in no triple
    assert dict(data.entities.items()) == {"a": data.entities.stored("a"), "b": b, "c": EntityInfo(name="c")}


def test_the_mapping_on_its_own():
    entities = EntityMetadata(["x", "y"])
    filled = entities.to_fill("y")
    assert entities.to_fill("y") is filled  # one object per described entity
    filled.types = ["Q5"]
    entities.name_missing_by_key()
    assert entities["y"] == EntityInfo(name="y", types=["Q5"]) and entities.stored("x") is None
    assert entities["x"] is not entities["x"]  # not stored: a fresh value each time, nothing kept
    assert "x" in entities and "z" not in entities and len(entities) == 2
