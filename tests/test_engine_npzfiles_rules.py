"""npzfiles.py's rules, case by case (issue 19: each rule's mutants): row / column blocks at their exact bounds
(block sizes by hand, the default size, .npy v1 / v2, C and Fortran order, zip members), truncated data, every
refusal's whole message (not numpy, truncated .npy / member, unreadable zip or member, other compression methods,
implausible declared sizes at the deflate ratio's bound, crafted by patching the zip's central directory), member
names, and load_checked's wrapping."""
from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from pooling.engine import npzfiles
from pooling.engine.npzfiles import ArrayFile, StoredArray, load_checked
from pooling.engine.userfiles import UserFileError, shown
from tests._raises_support import whole


def npy_bytes(array: np.ndarray, version=None) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, version=version, allow_pickle=False)
    return stream.getvalue()


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return stream.getvalue()


def patched_sizes(data: bytes, compressed: int | None = None, uncompressed: int | None = None) -> bytes:
    """The zip with its (only) central directory entry's sizes replaced (what infolist() reports)."""
    at = data.index(b"PK\x01\x02")
    data = bytearray(data)
    if compressed is not None:
        data[at + 20:at + 24] = struct.pack("<I", compressed)
    if uncompressed is not None:
        data[at + 24:at + 28] = struct.pack("<I", uncompressed)
    return bytes(data)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refused(path: Path, message: str, wanted=("a",)) -> None:
    with pytest.raises(UserFileError, match=whole(f"{path}: {message}")):
        with ArrayFile(path, wanted, "a"):
            pass


def rows_of_blocks(stored: StoredArray, block_bytes=None) -> list[tuple[int, int, tuple[int, ...]]]:
    return [(row, column, block.shape) for row, column, block in stored.blocks(block_bytes)]


# ---------------------------------------------------------------------------------------------------- blocks


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_row_blocks_of_a_c_ordered_npy_at_their_bounds(tmp_path, version):
    array = np.arange(15, dtype="<f4").reshape(5, 3)  # 12 bytes a row
    path = write(tmp_path, "a.npy", npy_bytes(array, version))
    with ArrayFile(path, ("a",), "a") as stored:
        info = stored.arrays["a"]
        assert (info.name, info.shape, info.dtype, info.nbytes) == ("a", (5, 3), np.dtype("<f4"), 60)
        assert rows_of_blocks(info, 24) == [(0, 0, (2, 3)), (2, 0, (2, 3)), (4, 0, (1, 3))]
        assert rows_of_blocks(info, 23) == [(row, 0, (1, 3)) for row in range(5)]
        assert rows_of_blocks(info, 5) == [(row, 0, (1, 3)) for row in range(5)]  # at least one row a block
        assert rows_of_blocks(info, 60) == [(0, 0, (5, 3))]
        assert rows_of_blocks(info, 48) == [(0, 0, (4, 3)), (4, 0, (1, 3))]
        np.testing.assert_array_equal(np.concatenate([block for _r, _c, block in info.blocks(36)]), array)
        np.testing.assert_array_equal(info.load(), array)  # the stream is left open by the blocks


def test_the_default_block_size(tmp_path, monkeypatch):
    assert npzfiles.ROW_BLOCK_BYTES == 64 * 2**20  # 64 MiB, as documented
    array = np.arange(15, dtype="<f4").reshape(5, 3)
    with ArrayFile(write(tmp_path, "a.npy", npy_bytes(array)), ("a",), "a") as stored:
        assert rows_of_blocks(stored.arrays["a"]) == [(0, 0, (5, 3))]
        monkeypatch.setattr(npzfiles, "ROW_BLOCK_BYTES", 24)
        assert rows_of_blocks(stored.arrays["a"]) == [(0, 0, (2, 3)), (2, 0, (2, 3)), (4, 0, (1, 3))]
        assert rows_of_blocks(stored.arrays["a"], 0) == [(0, 0, (2, 3)), (2, 0, (2, 3)), (4, 0, (1, 3))]


def test_column_blocks_of_a_fortran_ordered_array(tmp_path):
    array = np.asfortranarray(np.arange(15, dtype="<i8").reshape(3, 5))  # 24 bytes a column
    with ArrayFile(write(tmp_path, "a.npy", npy_bytes(array)), ("a",), "a") as stored:
        blocks = list(stored.arrays["a"].blocks(48))
        assert [(row, column, block.shape) for row, column, block in blocks] == \
            [(0, 0, (3, 2)), (0, 2, (3, 2)), (0, 4, (3, 1))]
        np.testing.assert_array_equal(np.concatenate([block for _r, _c, block in blocks], axis=1), array)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_blocks_of_zip_members(tmp_path, compression):
    scores = np.arange(12, dtype="<f8").reshape(4, 3)
    path = write(tmp_path, "a.npz", zip_bytes({"scores.npy": npy_bytes(scores), "other.npy": npy_bytes(np.ones(2))},
                                              compression))
    with ArrayFile(path, ("scores", "missing"), "ignored") as stored:
        assert list(stored.arrays) == ["scores"] and stored.members == ["scores", "other"]
        info = stored.arrays["scores"]
        assert rows_of_blocks(info, 48) == [(0, 0, (2, 3)), (2, 0, (2, 3))]
        np.testing.assert_array_equal(np.concatenate([block for _r, _c, block in info.blocks(24)]), scores)
        np.testing.assert_array_equal(load_checked(path, info), scores)


def test_one_block_for_other_shapes_and_without_a_stream(tmp_path):
    vector = np.arange(4, dtype="<f4")
    with ArrayFile(write(tmp_path, "a.npy", npy_bytes(vector)), ("a",), "a") as stored:
        blocks = list(stored.arrays["a"].blocks(4))
        assert len(blocks) == 1 and blocks[0][:2] == (0, 0)
        np.testing.assert_array_equal(blocks[0][2], vector)
    matrix = np.ones((2, 2))
    loaded = StoredArray("m", (2, 2), matrix.dtype, lambda: matrix)
    assert loaded.open_npy is None
    assert [(row, column) for row, column, _block in loaded.blocks(8)] == [(0, 0)]
    no_columns = np.zeros((3, 0), dtype="<f4")
    with ArrayFile(write(tmp_path, "e.npy", npy_bytes(no_columns)), ("a",), "a") as stored:
        assert rows_of_blocks(stored.arrays["a"], 2) == [(0, 0, (2, 0)), (2, 0, (1, 0))]


def test_truncated_data_while_reading_blocks():
    array = np.arange(600, dtype="<f4").reshape(2, 300)  # 1,200 bytes a row
    data = npy_bytes(array)
    for cut, missing in ((1201, "1,201"), (1, "1")):  # one block of both rows by default
        stored = StoredArray("a", (2, 300), np.dtype("<f4"), lambda: array,
                             lambda cut=cut: io.BytesIO(data[:-cut]))
        with pytest.raises(ValueError, match=whole(f"truncated data: {missing} bytes missing")):
            list(stored.blocks())
    whole_rows = StoredArray("a", (2, 300), np.dtype("<f4"), lambda: array, lambda: io.BytesIO(data[:-1200]))
    blocks = whole_rows.blocks(1200)
    assert next(blocks)[0] == 0
    with pytest.raises(ValueError, match=whole("truncated data: 1,200 bytes missing")):
        next(blocks)


# ---------------------------------------------------------------------------------------------------- refusals


def test_not_numpy_and_truncated_npy(tmp_path):
    refused(write(tmp_path, "p.npy", b"\x80\x04K\x01."), "not a .npy or .npz file (pickles are refused)")
    refused(write(tmp_path, "n.npy", b"\x93NUMP"), "not a .npy or .npz file (pickles are refused)")
    data = npy_bytes(np.arange(1000, dtype="<f4"))
    header = len(data) - 4000
    refused(write(tmp_path, "t.npy", data[:-4]), "truncated: the header declares shape (1000,) of float32 "
                                                  "(4,000 bytes) but 3,996 bytes follow it")
    refused(write(tmp_path, "h.npy", data[:header]), "truncated: the header declares shape (1000,) of float32 "
                                                     "(4,000 bytes) but 0 bytes follow it")
    with ArrayFile(write(tmp_path, "ok.npy", data), ("x",), "a") as stored:  # exactly the data declared
        assert stored.members == ["a"] and list(stored.arrays) == ["a"]
        np.testing.assert_array_equal(stored.arrays["a"].load(), np.arange(1000, dtype="<f4"))


def test_unreadable_zip(tmp_path):
    data = b"PK\x03\x04" + b"\x00" * 40
    try:
        zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        reason = str(exc)
    refused(write(tmp_path, "z.npz", data), f"not a readable .npz (zip) file ({reason})")


def test_other_compression_methods_are_refused(tmp_path):
    path = write(tmp_path, "b.npz", zip_bytes({"a.npy": npy_bytes(np.ones(3))}, zipfile.ZIP_BZIP2))
    refused(path, "`a` uses zip compression method 12; only stored and deflated members (np.savez / "
                  "savez_compressed) are read")
    refused(path, "`a` uses zip compression method 12; only stored and deflated members (np.savez / "
                  "savez_compressed) are read", wanted=("x", "a"))
    with ArrayFile(path, ("x",), "a") as stored:  # members not asked for are not looked at
        assert stored.members == ["a"] and stored.arrays == {}


def test_stored_members_declare_no_more_than_they_hold(tmp_path):
    data = zip_bytes({"a.npy": npy_bytes(np.ones(3))})
    size = zipfile.ZipFile(io.BytesIO(data)).infolist()[0].compress_size
    refused(write(tmp_path, "s.npz", patched_sizes(data, uncompressed=size + 1)),
            f"`a` declares {size + 1:,} bytes from {size:,} compressed: more than the compression can produce "
            "(a zip bomb?)")


def test_deflated_members_at_the_ratio_bound(tmp_path):
    data = zip_bytes({"a.npy": npy_bytes(np.zeros(3000))}, zipfile.ZIP_DEFLATED)
    size = zipfile.ZipFile(io.BytesIO(data)).infolist()[0].compress_size
    bound = npzfiles.DEFLATE_MAX_RATIO * size
    assert npzfiles.DEFLATE_MAX_RATIO == 1100
    with ArrayFile(write(tmp_path, "ok.npz", patched_sizes(data, uncompressed=bound)), ("a",), "a") as stored:
        assert stored.arrays["a"].shape == (3000,)  # the bound itself is plausible
    refused(write(tmp_path, "bomb.npz", patched_sizes(data, uncompressed=bound + 1)),
            f"`a` declares {bound + 1:,} bytes from {size:,} compressed: more than the compression can produce "
            "(a zip bomb?)")
    # a member declaring 0 compressed bytes is judged as 1
    refused(write(tmp_path, "zero.npz", patched_sizes(data, compressed=0, uncompressed=1101)),
            "`a` declares 1,101 bytes from 0 compressed: more than the compression can produce (a zip bomb?)")


def test_unreadable_and_truncated_members(tmp_path):
    try:
        np.lib.format.read_magic(io.BytesIO(b"hello, world"))
    except ValueError as exc:
        reason = str(exc)
    refused(write(tmp_path, "g.npz", zip_bytes({"a.npy": b"hello, world"})),
            f"`a`: not a readable .npy array header ({reason})")
    data = zip_bytes({"a.npy": npy_bytes(np.ones(3))})
    broken = data.replace(b"a.npy", b"b.npy", 1)  # the member's local header names another file
    try:
        archive = zipfile.ZipFile(io.BytesIO(broken))
        archive.open(archive.infolist()[0])
    except zipfile.BadZipFile as exc:
        reason = str(exc)
    refused(write(tmp_path, "l.npz", broken), f"`a`: cannot read ({reason})")
    full = npy_bytes(np.arange(1000, dtype="<f4"))
    refused(write(tmp_path, "t.npz", zip_bytes({"a.npy": full[:-4]})),
            f"`a` is truncated: its header declares shape (1000,) of float32 ({len(full):,} bytes) but the member "
            f"holds {len(full) - 4:,}")


def test_member_names_with_and_without_npy(tmp_path):
    path = write(tmp_path, "m.npz", zip_bytes({"plain": npy_bytes(np.arange(2)), "x.npy": npy_bytes(np.arange(3)),
                                               "y.npy.npy": npy_bytes(np.arange(4))}))
    with ArrayFile(path, ("plain", "x", "y.npy", "x.npy"), "a") as stored:
        assert stored.members == ["plain", "x", "y.npy"]
        assert {name: array.shape for name, array in stored.arrays.items()} == \
            {"plain": (2,), "x": (3,), "y.npy": (4,), "x.npy": (3,)}
        assert [array.name for array in stored.arrays.values()] == ["plain", "x", "y.npy", "x.npy"]


# ---------------------------------------------------------------------------------------------------- load_checked


def test_load_checked_wraps_read_failures(tmp_path):
    def failing(error):
        def load():
            raise error
        return StoredArray("scores", (1,), np.dtype("<f4"), load)

    path = tmp_path / "x.npz"
    for error in (ValueError("bad"), OSError("disk"), EOFError("eof"), zipfile.BadZipFile("crc")):
        with pytest.raises(UserFileError, match=whole(f"{path}: `scores`: cannot read the data ('{error}')")):
            load_checked(path, failing(error))
    long = "x" * 300
    with pytest.raises(UserFileError) as caught:
        load_checked(path, failing(ValueError(long)))
    assert caught.value.message == f"`scores`: cannot read the data ('{'x' * 199}...' (300 characters))"
    original = UserFileError("elsewhere", 3, "as it was")
    with pytest.raises(UserFileError) as caught:
        load_checked(path, failing(original))
    assert caught.value is original
    with pytest.raises(KeyError):
        load_checked(path, failing(KeyError("not wrapped")))


def test_a_corrupt_deflated_member_on_load(tmp_path):
    npy = npy_bytes(np.arange(100_000, dtype="<f4"))  # larger than a read of its header: no CRC check then
    data = bytearray(zip_bytes({"a.npy": npy}))
    data[data.index(npy) + len(npy) - 1] ^= 1  # the last value's last byte: the CRC no longer matches
    path = write(tmp_path, "c.npz", bytes(data))
    try:
        np.load(io.BytesIO(bytes(data)))["a"]
    except zipfile.BadZipFile as exc:
        reason = shown(str(exc), 200)
    with ArrayFile(path, ("a",), "a") as stored:
        with pytest.raises(UserFileError, match=whole(f"{path}: `a`: cannot read the data ({reason})")):
            load_checked(path, stored.arrays["a"])



class Trickle(io.RawIOBase):
    """A stream that hands out at most 5 bytes per read (as a socket or a zip member may)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = min(5, len(buffer), len(self.data) - self.at)
        buffer[:count] = self.data[self.at:self.at + count]
        self.at += count
        return count


def test_blocks_from_short_reads_and_frozen_arrays():
    array = np.arange(24, dtype="<f4").reshape(4, 6)
    data = npy_bytes(array)
    stored = StoredArray("a", (4, 6), np.dtype("<f4"), lambda: array, lambda: Trickle(data))
    blocks = list(stored.blocks(48))
    assert [(row, column, block.shape) for row, column, block in blocks] == [(0, 0, (2, 6)), (2, 0, (2, 6))]
    np.testing.assert_array_equal(np.concatenate([block for _r, _c, block in blocks]), array)
    with pytest.raises(AttributeError):
        stored.name = "b"


def test_nothing_is_read_before_the_file_is_entered(tmp_path):
    path = write(tmp_path, "a.npz", zip_bytes({"a.npy": npy_bytes(np.ones(2))}))
    unopened = ArrayFile(str(path), ("a",), "default")
    assert (unopened.path, unopened.wanted, unopened.default_name) == (path, ("a",), "default")
    assert unopened.members == [] and unopened.arrays == {}
    with unopened as stored:
        assert stored is unopened and stored.members == ["a"] and list(stored.arrays) == ["a"]
