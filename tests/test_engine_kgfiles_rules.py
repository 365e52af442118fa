"""pooling.engine.kgfiles' rules, case by case (issue 19: each rule's mutants): every refusal's whole message with
its file and line, the limits at their exact bounds, the line reader (BOM, CRLF, NUL, blank lines), the keyed tables
and vocabularies, the metadata files one by one (which file wins, what is cut to which length, what counts as
unused), and the duplicate filter on both of its paths (one int64 key per triple, or rows when keys would overflow).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pooling.engine import kgfiles
from pooling.engine.kgfiles import (EntityInfo, EntityMetadata, FieldLimits, KGFormatError, MetadataFiles,
                                    RelationInfo, read_kg)
from tests._raises_support import whole

SPLITS = {"train.txt": "b\tlikes\ta\na\tlikes\tc\n", "valid.txt": "c\thates\tb\n", "test.txt": "a\thates\tb\n"}


def write(folder: Path, **files) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return folder


def dataset(tmp_path: Path, **files) -> Path:
    return write(tmp_path / "ds", **{**SPLITS, **files})


# ---------------------------------------------------------------------------------------------------- types


def test_error_and_defaults():
    error = KGFormatError("a/f", 3, "bad")
    assert (str(error), error.path, error.line) == ("a/f:3: bad", "a/f", 3)
    error = KGFormatError(Path("a") / "g", None, "worse")
    assert (str(error), error.path, error.line) == ("a/g: worse", "a/g", None)
    assert str(KGFormatError("f", 0, "m")) == "f:0: m"
    assert FieldLimits() == FieldLimits(entity_key=255, relation_key=500, type_name=255)
    info = EntityInfo()
    assert (info.name, info.description, info.url, info.wikidata_id, info.types) == ("", "", "", "", [])
    assert EntityInfo().types is not info.types
    assert not hasattr(info, "__dict__")  # slots: one small object per described entity
    assert RelationInfo() == RelationInfo(text="", description="", domain_type="", range_type="")
    assert kgfiles.SPLITS == ("train", "valid", "test")


def test_entity_metadata_lookups():
    entities = EntityMetadata(["x", "y"])
    assert entities.stored("x") is None
    with pytest.raises(KeyError):
        entities["z"]
    assert entities["x"] == EntityInfo(name="x") and "x" in entities and "z" not in entities
    info = entities.to_fill("x")
    assert info == EntityInfo() and entities.to_fill("x") is info and entities.stored("x") is info
    assert entities["x"] is info  # stored: the same object
    info.name = "Named"
    entities.to_fill("y").description = "d"
    entities.name_missing_by_key()
    assert (entities["x"].name, entities["y"].name, entities["y"].description) == ("Named", "y", "d")
    assert list(entities) == ["x", "y"] and len(entities) == 2


def test_entity_metadata_membership_before_and_after_a_lookup():
    entities = EntityMetadata(["x"])
    entities.to_fill("x")
    assert entities["x"] is entities.stored("x")
    assert "x" in entities  # a stored key, asked before any miss built the key set
    assert "q" not in entities and 7 not in entities


# ---------------------------------------------------------------------------------------------------- lines


def test_read_lines(tmp_path):
    path = tmp_path / "f"
    path.write_bytes("\ufeffa\r\nb\n\nc\r\n".encode())
    assert kgfiles.read_lines(path) == ["a", "b", "", "c"]
    path.write_bytes(b"a\nb")
    assert kgfiles.read_lines(path) == ["a", "b"]
    path.write_bytes(b"")
    assert kgfiles.read_lines(path) == []
    path.write_bytes(b"\n")
    assert kgfiles.read_lines(path) == [""]
    path.write_bytes(b"a\r\r\n")
    assert kgfiles.read_lines(path) == ["a\r"]
    path.write_bytes("x\ufeff\n".encode())  # a BOM inside is kept
    assert kgfiles.read_lines(path) == ["x\ufeff"]


def test_read_lines_refusals(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\nc\x00d\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:3: contains a NUL byte (binary file?)")) as raised:
        kgfiles.read_lines(path)
    assert (raised.value.path, raised.value.line) == (str(path), 3)
    path.write_bytes(b"\x00")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: contains a NUL byte (binary file?)")):
        kgfiles.read_lines(path)
    path.write_bytes(b"ab\nabcd\n")
    assert kgfiles.read_lines(path, max_line_bytes=4) == ["ab", "abcd"]
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: line of 4 bytes, longer than the 3 allowed (not a "
                                                  "text file of this format?)")) as raised:
        kgfiles.read_lines(path, max_line_bytes=3)
    assert raised.value.line == 2
    assert kgfiles.read_lines(path, max_bytes=8) == ["ab", "abcd"]
    with pytest.raises(KGFormatError, match=whole(f"{path}: is 8 bytes, more than the 7 allowed")) as raised:
        kgfiles.read_lines(path, max_bytes=7)
    assert raised.value.line is None
    path.write_bytes(b"a\n\xc3")
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: not valid UTF-8 (byte 0xc3)")):
        kgfiles.read_lines(path)
    path.write_bytes(b"x" * ((1 << 20) + 1))
    with pytest.raises(KGFormatError, match="line of 1,048,577 bytes"):
        kgfiles.read_lines(path)
    with pytest.raises(KGFormatError, match=whole(f"{tmp_path / 'none'}: file not found")):
        kgfiles.read_lines(tmp_path / "none")


def test_split_fields():
    assert kgfiles.split_fields(" a b \t c d \t e ") == ["a b", "c d", "e"]
    assert kgfiles.split_fields("a\t\tb") == ["a", "", "b"]
    assert kgfiles.split_fields("  a   b c ") == ["a", "b", "c"]


# ---------------------------------------------------------------------------------------------------- triples


def test_read_triple_file(tmp_path):
    path = tmp_path / "f"
    path.write_text("\n a b c \n\nd\te f\tg\n  \n")
    assert kgfiles.read_triple_file(path) == [("a", "b", "c", 2), ("d", "e f", "g", 4)]
    for text, found, line in (("a b\n", 2, 1), ("x y z\na b c d\n", 4, 2)):
        path.write_text(text)
        with pytest.raises(KGFormatError, match=whole(f"{path}:{line}: expected 3 columns (head relation tail), "
                                                      f"found {found}")):
            kgfiles.read_triple_file(path)
    # three columns, one empty: named ("expected 3 columns ..., found 3" before)
    for text, empty in (("a\tb\t\n", "tail"), ("\ta\tb\n", "head"), ("a\t\tb\n", "relation")):
        path.write_text(text)
        with pytest.raises(KGFormatError, match=whole(f"{path}:1: the {empty} column is empty (expected head "
                                                      "relation tail)")):
            kgfiles.read_triple_file(path)
    path.write_text("\n \n")
    with pytest.raises(KGFormatError, match=whole(f"{path}: the split is empty")):
        kgfiles.read_triple_file(path)


@pytest.mark.parametrize("column", [0, 1, 2])
def test_triple_key_limits_at_their_bounds(tmp_path, column):
    limits = FieldLimits(entity_key=4, relation_key=6)
    limit = 6 if column == 1 else 4
    what = "relation key" if column == 1 else "entity key"
    path = tmp_path / "f"
    fields = ["h", "r", "t"]
    fields[column] = "k" * limit
    path.write_text("a b c\n" + "\t".join(fields) + "\n")
    assert kgfiles.read_triple_file(path, limits)[1] == (*fields, 2)
    fields[column] = "k" * (limit + 1)
    path.write_text("a b c\n" + "\t".join(fields) + "\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: {what} '{'k' * (limit + 1)}' is {limit + 1:,} "
                                                  f"characters long; {what}s are at most {limit}")):
        kgfiles.read_triple_file(path, limits)


def test_triple_key_default_limits(tmp_path):
    path = tmp_path / "f"
    path.write_text(f"{'h' * 255}\t{'r' * 500}\t{'t' * 255}\n")
    assert len(kgfiles.read_triple_file(path)) == 1
    path.write_text(f"{'h' * 255}\t{'r' * 501}\tt\n")
    with pytest.raises(KGFormatError, match=r"relation keys are at most 500$"):
        kgfiles.read_triple_file(path)
    path.write_text(f"h\tr\t{'t' * 256}\n")
    with pytest.raises(KGFormatError, match=r":1: entity key 'tttt.* is 256 characters long; entity keys are at "
                                            r"most 255$"):
        kgfiles.read_triple_file(path)
    key = "k" * 1500
    path.write_text(f"{key}\tr\tt\n")
    with pytest.raises(KGFormatError, match=r"is 1,500 characters long"):
        kgfiles.read_triple_file(path)


# ---------------------------------------------------------------------------------------------------- tables


def test_read_keyed_table(tmp_path):
    path = tmp_path / "f"
    path.write_text("a New York  City\n\n b \t x \t y \n  \nc\tz\n")
    assert kgfiles.read_keyed_table(path, 2, "id name") == {"a": (["New York  City"], 1), "b": (["x", "y"], 3),
                                                             "c": (["z"], 5)}
    path.write_text("r d1 d2 more words\n")
    assert kgfiles.read_keyed_table(path, 3, "x") == {"r": (["d1", "d2 more words"], 1)}
    for text, line in (("a b\nc\n", 2), ("\tname\n", 1), ("a\n", 1)):
        path.write_text(text)
        with pytest.raises(KGFormatError, match=whole(f"{path}:{line}: expected at least 2 tab-separated columns "
                                                      "(id name)")):
            kgfiles.read_keyed_table(path, 2, "id name")
    path.write_text("a x\nb y\n\na z\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:4: duplicate entry 'a' (first on line 1)")):
        kgfiles.read_keyed_table(path, 2, "id name")


def test_read_vocab(tmp_path):
    path = tmp_path / "v"
    path.write_text("b\n\na\textra\nkkkk\n")
    assert kgfiles.read_vocab(path, limit=4) == ["b", "a", "kkkk"]
    with pytest.raises(KGFormatError, match=whole(f"{path}:4: relation key 'kkkk' is 4 characters long; relation "
                                                  "keys are at most 3")):
        kgfiles.read_vocab(path, "relation key", 3)
    path.write_text("k" * 255 + "\n")
    assert kgfiles.read_vocab(path) == ["k" * 255]
    path.write_text("k" * 256 + "\n")
    with pytest.raises(KGFormatError, match=r":1: entity key .* entity keys are at most 255$"):
        kgfiles.read_vocab(path)
    path.write_text("a\nb\na\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:3: duplicate entry 'a' (first on line 1)")):
        kgfiles.read_vocab(path)


def test_read_json_object(tmp_path):
    path = tmp_path / "j.json"
    path.write_text('{"a":\r\n [1, 2]}\n')
    assert kgfiles.read_json_object(path) == {"a": [1, 2]}
    path.write_text('{"a": "' + "x" * (1 << 21) + '"}')  # one line past the text files' limit
    assert len(kgfiles.read_json_object(path)["a"]) == 1 << 21
    path.write_text("[1]")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: expected a JSON object keyed by id")):
        kgfiles.read_json_object(path)
    path.write_text('{"a": 1,\n}')
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: invalid JSON: Expecting property name enclosed in "
                                                  "double quotes")) as raised:
        kgfiles.read_json_object(path)
    assert raised.value.line == 2
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(KGFormatError, match=whole(f"{path}: invalid JSON: nested too deeply (more than a few "
                                                  "hundred levels)")):
        kgfiles.read_json_object(path)


def test_json_text(tmp_path):
    assert kgfiles._json_text("p", "k", "abcdef") == "abcdef"
    assert kgfiles._json_text("p", "k", "abcdef", 4) == "abcd"
    assert kgfiles._json_text("p", "k", 12) == "12"
    with pytest.raises(KGFormatError, match=whole("p: entry 'k' holds a NUL character (\\u0000)")):
        kgfiles._json_text("p", "k", "a\x00b")
    with pytest.raises(KGFormatError, match=whole("p: entry 'k' holds a lone surrogate (not valid Unicode)")):
        kgfiles._json_text("p", "k", "a\ud800b")


# ---------------------------------------------------------------------------------------------------- metadata


def test_resolve_metadata(tmp_path):
    folder = write(tmp_path / "ds", **{"entity2text.txt": "", "relation2text.txt": "", "relation_text.tsv": "",
                                       "en/types.json": "", "en/relations.json": "", "relations.json": ""})
    located = kgfiles.resolve_metadata(folder, MetadataFiles())
    assert located == {"entity_names": folder / "entity2text.txt", "wikidata": None, "relation_types": None,
                       "relation_text": folder / "relation_text.tsv", "entity_types": None,
                       "type_labels": folder / "en/types.json", "relation_labels": folder / "relations.json"}
    write(folder, **{"entity_names.tsv": "", "types.json": ""})
    located = kgfiles.resolve_metadata(folder, MetadataFiles(wikidata=str(folder / "relations.json")))
    assert located["entity_names"] == folder / "entity_names.tsv" and located["type_labels"] == folder / "types.json"
    assert located["wikidata"] == folder / "relations.json" and isinstance(located["wikidata"], Path)
    with pytest.raises(KGFormatError, match=whole(f"{tmp_path / 'no.json'}: file not found")):
        kgfiles.resolve_metadata(folder, MetadataFiles(type_labels=tmp_path / "no.json"))


def test_folder_not_found(tmp_path):
    with pytest.raises(KGFormatError, match=whole(f"{tmp_path / 'none'}: dataset folder not found")):
        read_kg(tmp_path / "none")
    (tmp_path / "file").write_text("")
    with pytest.raises(KGFormatError, match=whole(f"{tmp_path / 'file'}: dataset folder not found")):
        read_kg(str(tmp_path / "file"))


def test_entity_names_cut_and_unused(tmp_path):
    folder = dataset(tmp_path, **{"entity_names.tsv": f"a\t{'n' * 600}\nb\tBee\nq\tQueue\nr\tR\n"})
    data = read_kg(folder)
    assert data.entities["a"].name == "n" * 500 and data.entities["b"].name == "Bee"
    assert data.entities.stored("c") is None and data.unused_metadata == 2


def test_wikidata_fields_cut_and_precedence(tmp_path):
    record = {"label": "L" * 600, "description": "D" * 900, "wikidata_id": "Q" * 40, "wikipedia": "u" * 600}
    folder = dataset(tmp_path, **{"entity_names.tsv": "b\tBee\n",
                                  "entity_wikidata.json": json.dumps({"a": record, "b": {"label": "Other"},
                                                                      "c": {}, "z": 3, "y": {}})})
    data = read_kg(folder)
    a = data.entities["a"]
    assert (a.name, a.description, a.wikidata_id, a.url) == ("L" * 500, "D" * 900, "Q" * 32, "u" * 500)
    assert data.entities["b"].name == "Bee"  # the names file wins over the label
    c = data.entities.stored("c")
    assert (c.name, c.description, c.wikidata_id, c.url) == ("c", "", "", "")
    assert data.unused_metadata == 2
    folder = dataset(tmp_path, **{"entity_wikidata.json": json.dumps({"a": {"label": None, "description": None,
                                                                            "wikidata_id": None, "wikipedia": None}})})
    a = read_kg(folder).entities["a"]
    assert (a.name, a.description, a.wikidata_id, a.url) == ("a", "", "", "")
    (folder / "entity_wikidata.json").write_text(json.dumps({"a": ["not", "an", "object"]}))
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'entity_wikidata.json'}: entry 'a' is not an object")):
        read_kg(folder)
    (folder / "entity_wikidata.json").write_text(json.dumps({"a": {"description": "x\u0000"}}))
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'entity_wikidata.json'}: entry 'a' holds a NUL "
                                                  "character (\\u0000)")):
        read_kg(folder)


def test_entity_types(tmp_path):
    folder = dataset(tmp_path, **{"entity2types.json": json.dumps({"a": ["Q5", 7], "c": [], "zz": ["Q1"]})})
    data = read_kg(folder)
    assert data.entities["a"].types == ["Q5", "7"] and data.entities["a"].name == "a"
    assert data.entities.stored("c").types == [] and data.entities.stored("b") is None
    assert data.unused_metadata == 1
    (folder / "entity2types.json").write_text(json.dumps({"a": "Q5"}))
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'entity2types.json'}: types of 'a' are not a list")):
        read_kg(folder)
    (folder / "entity2types.json").write_text(json.dumps({"a": ["\ud800"]}))
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'entity2types.json'}: entry 'a' holds a lone "
                                                  "surrogate (not valid Unicode)")):
        read_kg(folder)


def test_type_labels(tmp_path):
    folder = dataset(tmp_path, **{"types.json": json.dumps({"Q5": {"label": "human"}, "Q6": {"x": 1}, "Q7": "seven",
                                                            "Q8": 8})})
    data = read_kg(folder)
    assert data.type_labels == {"Q5": "human", "Q6": "", "Q7": "seven", "Q8": "8"}
    assert data.unused_metadata == 0
    (folder / "types.json").write_text(json.dumps({"Q\u0000": "x"}))
    with pytest.raises(KGFormatError, match="holds a NUL character"):
        read_kg(folder)


def test_relation_types(tmp_path):
    folder = dataset(tmp_path, **{"relation_types.tsv": f"likes\t{'d' * 5}\t{'r' * 5}\t{'x' * 9}\nnone\ta\tb\n"})
    data = read_kg(folder, limits=FieldLimits(type_name=5))
    assert (data.relations["likes"].domain_type, data.relations["likes"].range_type) == ("d" * 5, "r" * 5)
    assert data.relations["hates"] == RelationInfo() and data.unused_metadata == 1
    path = folder / "relation_types.tsv"
    for text, name in ((f"likes\t{'d' * 6}\tr\n", "d" * 6), (f"likes\td\t{'r' * 6}\n", "r" * 6)):
        path.write_text("hates\ta\tb\n" + text)
        with pytest.raises(KGFormatError, match=whole(f"{path}:2: type '{name}' is 6 characters long; types are at "
                                                      "most 5")):
            read_kg(folder, limits=FieldLimits(type_name=5))
    path.write_text(f"likes\t{'d' * 1255}\tr\n")
    with pytest.raises(KGFormatError, match=r"is 1,255 characters long; types are at most 255$"):
        read_kg(folder)
    path.write_text(f"likes\t{'d' * 255}\tr\n")
    assert read_kg(folder).relations["likes"].domain_type == "d" * 255
    path.write_text("likes\td\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: expected at least 3 tab-separated columns (relation "
                                                  "domain range)")):
        read_kg(folder)


def test_relation_text_and_labels(tmp_path):
    folder = dataset(tmp_path, **{"relation_text.tsv": f"likes\t{'t' * 600}\nnope\tx\n",
                                  "relations.json": json.dumps({"likes": {"label": "L", "description": "fond"},
                                                                "hates": {"label": "H" * 600, "description": None},
                                                                "gone": {"label": "G"}, "x": 1})})
    data = read_kg(folder)
    assert (data.relations["likes"].text, data.relations["likes"].description) == ("t" * 500, "fond")
    assert (data.relations["hates"].text, data.relations["hates"].description) == ("H" * 500, "")
    assert data.unused_metadata == 3  # nope, gone, x
    (folder / "relation_text.tsv").unlink()
    (folder / "relations.json").write_text(json.dumps({"likes": "plain", "hates": {"label": None}}))
    data = read_kg(folder)
    assert data.relations["likes"] == RelationInfo() and data.relations["hates"] == RelationInfo()
    (folder / "relations.json").write_text(json.dumps({"likes": {"description": "\ud800"}}))
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'relations.json'}: entry 'likes' holds a lone surrogate "
                                                  "(not valid Unicode)")):
        read_kg(folder)


def test_metadata_given_explicitly(tmp_path):
    folder = dataset(tmp_path, **{"entity_names.tsv": "a\tConventional\n"})
    meta = write(tmp_path / "meta", **{"n.tsv": "a\tExplicit\n", "rt.tsv": "likes\td\tr\n", "rx.tsv": "likes\tfond\n"})
    data = read_kg(folder, MetadataFiles(entity_names=meta / "n.tsv", relation_types=meta / "rt.tsv",
                                         relation_text=meta / "rx.tsv"))
    assert data.entities["a"].name == "Explicit"
    assert data.relations["likes"] == RelationInfo(text="fond", domain_type="d", range_type="r")


# ---------------------------------------------------------------------------------------------------- splits


def test_the_line_reader_and_the_fast_reader_agree(tmp_path):
    fast = read_kg(dataset(tmp_path / "fast"))
    slow = read_kg(dataset(tmp_path / "slow", **{"train.txt": "b likes a\r\na\tlikes\tc\n\n"}))
    assert (fast.entity_keys, fast.relation_keys) == (slow.entity_keys, slow.relation_keys) == (["a", "b", "c"],
                                                                                               ["hates", "likes"])
    for split in kgfiles.SPLITS:
        assert fast.splits[split].tolist() == slow.splits[split].tolist()
        assert slow.splits[split].dtype == np.int64
    assert slow.duplicates_skipped == {"train": 0, "valid": 0, "test": 0}


def test_duplicates_in_the_line_reader(tmp_path):
    data = read_kg(dataset(tmp_path, **{"train.txt": "c likes a\nb likes a\nc likes a\n\na likes b\nc likes a\n"}))
    assert data.splits["train"].tolist() == [[2, 1, 0], [1, 1, 0], [0, 1, 1]]
    assert data.duplicates_skipped == {"train": 2, "valid": 0, "test": 0}


def test_vocabularies_given(tmp_path):
    meta = write(tmp_path / "meta", **{"e.txt": "c\nb\na\nunused\n", "r.txt": "likes\nhates\n"})
    for train in (SPLITS["train.txt"], "b likes a\na likes c\n"):  # the fast reader, the line reader
        data = read_kg(dataset(tmp_path / train[1], **{"train.txt": train}),
                       MetadataFiles(entity_vocab=meta / "e.txt", relation_vocab=meta / "r.txt"))
        assert data.entity_keys == ["c", "b", "a", "unused"] and data.relation_keys == ["likes", "hates"]
        assert data.splits["train"].tolist() == [[1, 0, 2], [2, 0, 0]]
        assert data.splits["valid"].tolist() == [[0, 1, 1]]


@pytest.mark.parametrize("line, unknown", [("x likes a", "entity 'x'"), ("b loves a", "relation 'loves'"),
                                           ("b likes x", "entity 'x'"), ("x loves y", "entity 'x'"),
                                           ("b loves y", "relation 'loves'")])
def test_unknown_keys_in_given_vocabularies(tmp_path, line, unknown):
    meta = write(tmp_path / "meta", **{"e.txt": "a\nb\nc\n", "r.txt": "likes\nhates\n"})
    folder = dataset(tmp_path, **{"train.txt": "b likes a\n\n" + line + "\n"})
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'train.txt'}:3: unknown {unknown} (not in the given "
                                                  "vocabulary)")):
        read_kg(folder, MetadataFiles(entity_vocab=meta / "e.txt", relation_vocab=meta / "r.txt"))


def test_one_vocabulary_given(tmp_path):
    meta = write(tmp_path / "meta", **{"e.txt": "c\nb\na\n", "r.txt": "likes\nhates\n"})
    data = read_kg(dataset(tmp_path / "e", **{"train.txt": "b likes a\na likes c\n"}),
                   MetadataFiles(entity_vocab=meta / "e.txt"))
    assert data.entity_keys == ["c", "b", "a"] and data.relation_keys == ["hates", "likes"]
    data = read_kg(dataset(tmp_path / "r", **{"train.txt": "b likes a\na likes c\n"}),
                   MetadataFiles(relation_vocab=meta / "r.txt"))
    assert data.entity_keys == ["a", "b", "c"] and data.relation_keys == ["likes", "hates"]


def test_a_triple_file_problem_is_reported_before_a_vocabulary_problem(tmp_path):
    meta = write(tmp_path / "meta", **{"e.txt": "a\na\n", "r.txt": "likes\nlikes\n"})
    folder = dataset(tmp_path, **{"valid.txt": "a b\n"})
    for files in (MetadataFiles(entity_vocab=meta / "e.txt"), MetadataFiles(relation_vocab=meta / "r.txt")):
        with pytest.raises(KGFormatError, match=whole(f"{folder / 'valid.txt'}:1: expected 3 columns (head relation "
                                                      "tail), found 2")):
            read_kg(folder, files)
    (folder / "valid.txt").write_text("c\thates\tb\n")
    with pytest.raises(KGFormatError, match=whole(f"{meta / 'r.txt'}:2: duplicate entry 'likes' (first on line 1)")):
        read_kg(folder, MetadataFiles(relation_vocab=meta / "r.txt"))
    meta = write(tmp_path / "meta", **{"r.txt": "r" * 7 + "\n"})
    with pytest.raises(KGFormatError, match=whole(f"{meta / 'r.txt'}:1: relation key 'rrrrrrr' is 7 characters long; "
                                                  "relation keys are at most 6")):
        read_kg(folder, MetadataFiles(relation_vocab=meta / "r.txt"), FieldLimits(relation_key=6))
    meta = write(tmp_path / "meta", **{"e.txt": "e" * 7 + "\n"})
    with pytest.raises(KGFormatError, match=whole(f"{meta / 'e.txt'}:1: entity key 'eeeeeee' is 7 characters long; "
                                                  "entity keys are at most 6")):
        read_kg(folder, MetadataFiles(entity_vocab=meta / "e.txt"), FieldLimits(entity_key=6))


def test_limits_reach_the_line_reader(tmp_path):
    folder = dataset(tmp_path, **{"train.txt": "b likes a\na likes ccc\n"})
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'train.txt'}:2: entity key 'ccc' is 3 characters long; "
                                                  "entity keys are at most 2")):
        read_kg(folder, limits=FieldLimits(entity_key=2))


def test_first_occurrences_on_both_paths():
    encoded = np.array([[2, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 1], [1, 0, 0]])
    assert kgfiles._first_occurrences(encoded, 3, 2).tolist() == [0, 1, 3]
    assert kgfiles._first_occurrences(encoded, 2**31, 1).tolist() == [0, 1, 3]  # 2**62: rows, not keys
    assert kgfiles._first_occurrences(encoded[:0], 3, 2).tolist() == []
    assert kgfiles._first_occurrences(np.array([[0, 0, 0]]), 1, 0).tolist() == [0]
    # keys that would wrap around int64: (0, 0, 5) and (1, 0, 5) differ by 2**70
    big = np.array([[0, 0, 5], [1, 0, 5], [0, 0, 5]])
    assert kgfiles._first_occurrences(big, 2**40, 2**30).tolist() == [0, 1]
    # just under 2**62 the keys are used and still distinct
    size = 2**31 - 1
    rows = np.array([[size - 1, 0, size - 1], [size - 1, 0, size - 2], [0, 0, size - 1], [size - 1, 0, size - 1]])
    assert kgfiles._first_occurrences(rows, size, 1).tolist() == [0, 1, 2]


def test_first_occurrences_keys_mix_all_three_columns():
    # rows equal in two columns each; a key that dropped a column or its multiplier would merge some
    rows = np.array([[0, 1, 2], [1, 0, 2], [2, 1, 0], [0, 2, 1], [1, 2, 0], [2, 0, 1], [0, 1, 2]])
    assert kgfiles._first_occurrences(rows, 3, 3).tolist() == [0, 1, 2, 3, 4, 5]
    rows = np.array([[0, 0, 3], [1, 0, 0], [0, 1, 0], [0, 0, 3]])  # (h R + r) E + t with E = 4, R = 2: 3, 8, 4
    assert kgfiles._first_occurrences(rows, 4, 2).tolist() == [0, 1, 2]


def test_more_rules_by_hand(tmp_path):
    with pytest.raises(Exception):
        FieldLimits().entity_key = 3  # frozen
    folder = write(tmp_path / "r", **{"en/relations.json": ""})
    assert kgfiles.resolve_metadata(folder, MetadataFiles())["relation_labels"] == folder / "en/relations.json"
    path = tmp_path / "n"
    path.write_bytes(b"\n\x00")
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: contains a NUL byte (binary file?)")):
        kgfiles.read_lines(path)
    path.write_bytes('\ufeff{"a": 1}'.encode())  # read through read_lines: the BOM is dropped
    assert kgfiles.read_json_object(path) == {"a": 1}
    path.write_bytes(b"\tx\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: expected at least 1 tab-separated columns (one id per "
                                                  "line)")):
        kgfiles.read_vocab(path)
    folder = dataset(tmp_path, **{"entity_names.tsv": "a\n"})
    with pytest.raises(KGFormatError, match=whole(f"{folder / 'entity_names.tsv'}:1: expected at least 2 "
                                                  "tab-separated columns (id name)")):
        read_kg(folder)


def test_unused_entries_are_all_counted_wherever_they_are(tmp_path):
    # two unused entries, the first before a used one: each is counted, and reading goes on past it
    folder = dataset(tmp_path / "t", **{"entity2types.json": json.dumps({"zz": ["Q1"], "a": ["Q5"], "yy": []})})
    data = read_kg(folder)
    assert data.entities["a"].types == ["Q5"] and data.unused_metadata == 2
    folder = dataset(tmp_path / "r", **{"relation_types.tsv": "none\ta\tb\nlikes\td\tr\nnada\tc\te\n"})
    data = read_kg(folder)
    assert (data.relations["likes"].domain_type, data.relations["likes"].range_type) == ("d", "r")
    assert data.unused_metadata == 2
    folder = dataset(tmp_path / "x", **{"relation_text.tsv": "none\tx\nlikes\tfond of\nnada\ty\n"})
    data = read_kg(folder)
    assert data.relations["likes"].text == "fond of" and data.unused_metadata == 2
    path = folder / "relation_text.tsv"
    path.write_text("likes\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: expected at least 2 tab-separated columns (relation "
                                                  "text)")):
        read_kg(folder)


def test_first_occurrences_tell_rows_apart_by_their_relation_alone():
    rows = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]])
    assert kgfiles._first_occurrences(rows, 2, 2).tolist() == [0, 1, 2]


def test_first_occurrences_of_keys_past_int64_between_2_63_and_3_62():
    # E = 2**40, R = 1: E * E = 2**80 (under 3**62 ~ 2**98): one key per triple would wrap, h = 2**24 landing on h = 0
    rows = np.array([[0, 0, 5], [2**24, 0, 5], [0, 0, 5]])
    assert kgfiles._first_occurrences(rows, 2**40, 1).tolist() == [0, 1]
