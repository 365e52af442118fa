"""pooling.engine.userfiles / npzfiles, the defensive readers every importer uses (Django-free): long lines and
fields found exactly (against a regex brute force, across scan blocks), non-regular files refused without
blocking, .npy headers read without loading, JSON depth and size bounded."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pooling.engine import userfiles
from pooling.engine.npzfiles import ArrayFile
from pooling.engine.userfiles import UserFileError

ROOT = Path(__file__).resolve().parent.parent


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300).map(lambda b: bytes(c if c % 5 else 32 for c in b)),
       limit=st.integers(0, 40), block=st.integers(1, 64), separators=st.sampled_from([b"\n", b"\r\n", b" \t\r\n"]))
def test_long_runs_match_a_regex_brute_force(data, limit, block, separators):
    expected = [(m.start(), m.end()) for m in re.finditer(b"[^" + re.escape(separators) + b"]+", data)
                if m.end() - m.start() > limit]
    saved = userfiles._SCAN_BLOCK
    userfiles._SCAN_BLOCK = block  # small blocks: runs that cross block boundaries
    try:
        assert list(userfiles._long_runs(data, separators, limit)) == expected
    finally:
        userfiles._SCAN_BLOCK = saved


@pytest.mark.parametrize("universal", [False, True])
def test_long_line_is_named_by_its_editor_line(tmp_path, universal):
    data = b"a\r\nbb\rccc\n" + b"x" * 50 + b"\nz"
    with pytest.raises(UserFileError) as raised:
        userfiles.check_line_lengths(tmp_path / "f", data, max_line_bytes=10, universal_newlines=universal)
    # \r alone ends a line only with universal newlines: the long line is then the 4th, else the 3rd
    assert raised.value.line == (4 if universal else 3)
    assert "line of 50 bytes" in str(raised.value)


def test_field_lengths_count_characters_not_bytes():
    fine = ("é" * 100 + " q\n").encode()  # 200 bytes, 100 characters
    userfiles.check_field_lengths("f", fine, 150, "keys")
    with pytest.raises(UserFileError, match=r"f:2: a field of 200 characters: keys are at most 150"):
        userfiles.check_field_lengths("f", fine + ("é" * 200).encode(), 150, "keys")


@pytest.mark.parametrize("kind, expected", [("fifo", "FIFO"), ("device", "character device"),
                                            ("directory", "directory"), ("missing", "file not found")])
def test_only_regular_files_are_read(tmp_path, kind, expected):
    path = tmp_path / "input"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    with pytest.raises(UserFileError, match=expected):  # a FIFO with no writer: opened without blocking
        userfiles.read_bytes(path)


def test_a_fifo_never_blocks_the_evaluation_command_line(tmp_path):
    fifo = tmp_path / "ranks.tsv"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "evaluation", "micro", str(fifo)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"error: {fifo}: cannot read file: is a FIFO (named pipe), not a regular file\n"


def test_symlinks_to_regular_files_and_size_limits(tmp_path):
    (tmp_path / "real").write_bytes(b"abc")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert userfiles.read_bytes(tmp_path / "link") == b"abc"
    with pytest.raises(UserFileError, match="is 3 bytes, more than the 2 allowed"):
        userfiles.read_bytes(tmp_path / "real", max_bytes=2)


def test_json_depth_and_values():
    assert userfiles.read_json("f", '{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    with pytest.raises(UserFileError, match="nested too deeply"):
        userfiles.read_json("f", "[" * 50_000 + "]" * 50_000)
    with pytest.raises(UserFileError, match=r"f:2: invalid JSON"):
        userfiles.read_json("f", '{"a":\n ]')


def test_shown_shortens_and_escapes():
    assert userfiles.shown("abc") == "'abc'"
    long = userfiles.shown("\x1b[31m" + "k" * 1000)
    assert "\x1b" not in long and len(long) < 120 and "1,005 characters" in long


def _npy(array: np.ndarray, version=None) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, version=version, allow_pickle=True)
    return stream.getvalue()


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_npy_header_is_read_without_the_data(tmp_path, version):
    array = np.arange(12, dtype="<f4").reshape(3, 4)
    path = tmp_path / "a.npy"
    path.write_bytes(_npy(array, version))
    with ArrayFile(path, ("scores",), "scores") as stored:
        info = stored.arrays["scores"]
        assert (info.shape, info.dtype, info.nbytes) == ((3, 4), np.dtype("<f4"), 48)
        assert np.array_equal(info.load(), array)


def test_object_and_garbage_headers_are_refused(tmp_path):
    (tmp_path / "o.npy").write_bytes(_npy(np.array(["x"], dtype=object)))
    with pytest.raises(UserFileError, match="pickled"):
        ArrayFile(tmp_path / "o.npy", ("scores",), "scores").__enter__()
    (tmp_path / "g.npy").write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': 1}    \n")
    with pytest.raises(UserFileError, match="not a readable .npy array header"):
        ArrayFile(tmp_path / "g.npy", ("scores",), "scores").__enter__()
