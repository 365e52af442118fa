"""The Django-free dataset reader: formats, metadata files and error positions."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pooling.engine.kgfiles import KGFormatError, MetadataFiles, read_kg


def write(folder, **files):
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


SPLITS = {"train.txt": "b\tlikes\ta\na\tlikes\tc\n", "valid.txt": "c\thates\tb\n", "test.txt": "a\thates\tb\n"}


def test_vocabularies_are_sorted_and_triples_are_index_arrays(tmp_path):
    data = read_kg(write(tmp_path / "ds", **SPLITS))
    assert data.entity_keys == ["a", "b", "c"] and data.relation_keys == ["hates", "likes"]
    assert data.splits["train"].dtype == np.int64
    # rows keep file order: (b likes a), (a likes c)
    assert data.splits["train"].tolist() == [[1, 1, 0], [0, 1, 2]]
    assert data.counts == {"entities": 3, "relations": 2, "train": 2, "valid": 1, "test": 1}


def test_kgbert_entity_text_bom_and_names_with_spaces(tmp_path):
    folder = write(tmp_path / "ds", **SPLITS, **{
        "entity2text.txt": "\ufeffa\tAlpha Centauri\nb\tBeta\nzzz\tNot in any triple\n",
        "relation2text.txt": "likes\tis fond of\n",
    })
    data = read_kg(folder)
    assert data.entities["a"].name == "Alpha Centauri"
    assert data.entities["c"].name == "c"  # no name: the key stands in
    assert data.relations["likes"].text == "is fond of"
    assert data.unused_metadata == 1


def test_wikidata_types_and_codex_labels_from_explicit_paths(tmp_path):
    folder = write(tmp_path / "ds", **SPLITS)
    meta = write(tmp_path / "meta", **{
        "wd.json": json.dumps({"a": {"label": "A", "description": "first", "wikidata_id": "Q1",
                                     "wikipedia": "https://en.wikipedia.org/wiki/A"}}),
        "types.json": json.dumps({"a": ["Q5"], "b": ["Q5", "Q6"]}),
        "en/types.json": json.dumps({"Q5": {"label": "human"}}),
        "rel.json": json.dumps({"likes": {"label": "likes", "description": "fondness"}}),
    })
    data = read_kg(folder, MetadataFiles(wikidata=meta / "wd.json", entity_types=meta / "types.json",
                                         type_labels=meta / "en" / "types.json", relation_labels=meta / "rel.json"))
    a = data.entities["a"]
    assert (a.name, a.description, a.wikidata_id, a.url) == ("A", "first", "Q1", "https://en.wikipedia.org/wiki/A")
    assert data.entities["b"].types == ["Q5", "Q6"] and data.type_labels == {"Q5": "human"}
    assert data.relations["likes"].description == "fondness"


def test_explicit_metadata_file_must_exist(tmp_path):
    with pytest.raises(KGFormatError, match="nope.tsv: file not found"):
        read_kg(write(tmp_path / "ds", **SPLITS), MetadataFiles(entity_names=tmp_path / "nope.tsv"))


def test_error_carries_path_and_line(tmp_path):
    folder = write(tmp_path / "ds", **{**SPLITS, "test.txt": "a\thates\tb\n\na\tb\n"})
    with pytest.raises(KGFormatError) as raised:
        read_kg(folder)
    assert raised.value.line == 3 and raised.value.path.endswith("test.txt")


def test_file_order_kept_and_later_repeats_dropped(tmp_path):
    folder = write(tmp_path / "ds", **{**SPLITS, "train.txt": "c\tlikes\ta\nb\tlikes\ta\nc\tlikes\ta\na\tlikes\tb\n"})
    data = read_kg(folder)
    a, b, c = 0, 1, 2
    likes = data.relation_keys.index("likes")
    assert data.splits["train"].tolist() == [[c, likes, a], [b, likes, a], [a, likes, b]]
    assert data.duplicates_skipped["train"] == 1
