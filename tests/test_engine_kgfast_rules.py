"""kgfast.py's rules, case by case (issue 19: each rule's mutants). The fast reader either declines (None: the
line-by-line reader takes over) or gives exactly what the line-by-line reader gives; read_kg's results are the
same either way, so these tests call kgfast.read_splits directly: it must accept the common layout (BOM, a last
line without its line end, keys at the length limits, several chunks, vocabularies given) with the line reader's
result as the reference, and decline every other layout."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pooling.engine import kgfast, kgfiles
from pooling.engine.kgfiles import FieldLimits

LIMITS = FieldLimits(entity_key=6, relation_key=4)


def folder_of(tmp_path: Path, train: bytes, valid: bytes = b"a\tr\tb\n", test: bytes = b"b\tr\ta\n") -> Path:
    folder = tmp_path / "kg"
    folder.mkdir(exist_ok=True)
    for split, data in (("train", train), ("valid", valid), ("test", test)):
        (folder / f"{split}.txt").write_bytes(data)
    return folder


def fast(folder: Path, limits: FieldLimits = LIMITS, entity_vocab=None, relation_vocab=None):
    return kgfast.read_splits({split: folder / f"{split}.txt" for split in kgfiles.SPLITS}, limits.entity_key,
                              limits.relation_key, entity_vocab, relation_vocab)


def assert_as_line_reader(folder: Path, limits: FieldLimits = LIMITS, entity_vocab=None, relation_vocab=None):
    got = fast(folder, limits, entity_vocab, relation_vocab)
    assert got is not None, "the fast reader declined a file in the common layout"
    entity_keys, relation_keys, splits = got
    expected_entities, expected_relations, expected_splits = kgfiles._read_splits_by_line(
        folder, limits, entity_vocab, relation_vocab)
    assert entity_keys == expected_entities and relation_keys == expected_relations
    assert list(splits) == list(expected_splits)
    for split, encoded in splits.items():
        assert encoded.dtype == np.int64 and encoded.shape == expected_splits[split].shape
        np.testing.assert_array_equal(encoded, expected_splits[split], err_msg=split)
    return got


def test_a_small_dataset_by_hand(tmp_path):
    folder = folder_of(tmp_path, b"bb\tlikes\ta\na\tis\tccc\n", b"ccc\tis\tbb\n", b"a\tlikes\tdd\n")
    entity_keys, relation_keys, splits = assert_as_line_reader(folder, FieldLimits())
    assert entity_keys == ["a", "bb", "ccc", "dd"] and relation_keys == ["is", "likes"]
    assert splits["train"].tolist() == [[1, 1, 0], [0, 0, 2]]
    assert splits["valid"].tolist() == [[2, 0, 1]]
    assert splits["test"].tolist() == [[0, 1, 3]]


@pytest.mark.parametrize("train", [
    b"a\tr\tbc",  # the last line without its line end (the last token ends the buffer)
    b"a\tr\tbc\nbc\tr\txyz",
    b"\xef\xbb\xbfa\tr\tb\n",  # a BOM
    b"\xef\xbb\xbfa\tr\tb",
    "é\tr\tz\nz\tr\tÉa\nab\tr\tß\n".encode(),  # UTF-8: bytewise order is code-point order
    b"abcdef\trrrr\tb\n",  # keys exactly at both limits
    b"a\tr\tb\na\tr\tb\nb\tr\ta\n",  # repeats are kept (read_kg drops them later)
    b"x\ty\tz\n",
])
def test_common_layouts_are_read_as_the_line_reader_reads_them(tmp_path, train):
    assert_as_line_reader(folder_of(tmp_path, train))


def test_tokens_copied_in_several_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(kgfast, "_CHUNK", 2)
    rng = np.random.default_rng(0)
    lines = [f"e{rng.integers(0, 30)}\tr{rng.integers(0, 4)}\tlong{rng.integers(0, 30)}" for _ in range(9)]
    assert_as_line_reader(folder_of(tmp_path, "\n".join(lines).encode(), b"e1\tr0\te2\ne3\tr1\te1\n",
                                    b"long3\tr2\te1"), FieldLimits())


def test_given_vocabularies_keep_their_order(tmp_path):
    folder = folder_of(tmp_path, b"b\tq\ta\nc\tr\tb\n")
    entity_vocab, relation_vocab = ["c", "x", "b", "a"], ["r", "q"]
    entity_keys, relation_keys, splits = assert_as_line_reader(folder, LIMITS, entity_vocab, relation_vocab)
    assert entity_keys == entity_vocab and relation_keys == relation_vocab
    assert splits["train"].tolist() == [[2, 1, 3], [0, 0, 2]]
    assert splits["valid"].tolist() == [[3, 0, 2]] and splits["test"].tolist() == [[2, 0, 3]]
    assert_as_line_reader(folder, LIMITS, entity_vocab, None)
    assert_as_line_reader(folder, LIMITS, None, relation_vocab)


@pytest.mark.parametrize("train", [
    b"",  # empty
    b"\xef\xbb\xbf",  # a BOM only
    b"\na\tr\tb\n",  # a blank first line
    b"\xef\xbb\xbf\na\tr\tb\n",
    b"a\tr\tb\n\nb\tr\ta\n",  # a blank line inside
    b"a\tr\tb\r\n",  # CRLF
    b"a\tr\rx\tb\n",  # a CR anywhere
    b"a\tr\tb\x00\n",  # a NUL
    b"a\tr\tb\n\xff\tr\tb\n",  # not UTF-8
    b"a r b\n",  # no tab
    b"a\tr\tb\tc\n",  # three tabs
    b"a\tr\tb\tc\nd\te\n",  # as many tabs as two lines need, in the wrong lines
    b"a\tr\nb\tr\tc\td\n",
    b"\tr\tb\n",  # empty tokens
    b"a\t\tb\n",
    b"a\tr\t\n",
    b"a\tr\t",
    b" a\tr\tb\n",  # keys with surrounding whitespace (the line reader strips them)
    b"a\tr \tb\n",
    b"a\tr\tb \n",
    b"abcdefg\tr\tb\n",  # an entity key one longer than its limit
    b"a\tr\tabcdefg\n",
    b"a\trrrrr\tb\n",  # a relation key one longer than its limit
    b"a\tr\t" + b"b" * (1 << 20) + b"\n",  # a line longer than the line limit
])
def test_other_layouts_are_declined(tmp_path, train):
    assert fast(folder_of(tmp_path, train)) is None


def test_declined_in_any_split_and_for_unknown_keys(tmp_path):
    assert fast(folder_of(tmp_path, b"a\tr\tb\n", test=b"a\tr\tb\r\n")) is None
    assert fast(folder_of(tmp_path, b"a\tr\tb\n", valid=b"")) is None
    folder = folder_of(tmp_path, b"a\tr\tb\n")
    assert fast(folder, LIMITS, ["a"], None) is None  # b is not in the entity vocabulary
    assert fast(folder, LIMITS, None, ["s"]) is None
    (folder / "valid.txt").unlink()
    assert fast(folder) is None  # a missing file: the line reader reports it


def test_the_limits_apply_per_kind(tmp_path):
    folder = folder_of(tmp_path, b"abcd\tabcd\tb\n")
    assert fast(folder, FieldLimits(entity_key=4, relation_key=4)) is not None
    assert fast(folder, FieldLimits(entity_key=3, relation_key=4)) is None
    assert fast(folder, FieldLimits(entity_key=4, relation_key=3)) is None


def test_offsets_of_files_under_2_gib_take_int32(tmp_path):
    # "half the memory of the offsets": int32 while every offset fits (a file of 2^31 - 1 bytes or more: int64)
    folder = folder_of(tmp_path, b"a\tr\tb\n" * 20 + b"ccc\tr\td")
    heads, relations, tails = kgfast._columns(folder / "train.txt")
    for tokens in (heads, relations, tails):
        assert tokens.starts.dtype == np.int32 and tokens.lengths.dtype == np.int32
    assert heads.starts.tolist()[-2:] == [114, 120] and tails.lengths.tolist()[-2:] == [1, 1]
    assert relations.starts.tolist()[:2] == [2, 8] and heads.lengths.tolist()[-1] == 3
