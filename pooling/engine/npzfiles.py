"""User ``.npy`` / ``.npz`` files described from their headers, loaded only once the caller has checked the
declared shapes (Django-free).

A ``.npy`` header declares the array's shape and dtype; numpy's ``np.load`` allocates what it declares before
reading the data, so a 200-byte file can ask for tens of GiB. Here the headers are read first
(:class:`ArrayFile`), the caller compares the shapes with what it expects (a score matrix is questions x
entities), and only then :meth:`StoredArray.load` reads the data. Object (pickled) arrays are refused; inside a
zip, a member must hold at least what its header declares, and its declared size must be one deflate can produce
from its compressed size (deflate expands at most ~1032:1), so a zip bomb is refused before it is inflated.
"""
from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ContextManager

import numpy as np

from pooling.engine.userfiles import MAX_NPY_HEADER, UserFileError, array_bytes, npy_header, open_regular, shown

DEFLATE_MAX_RATIO = 1100
ROW_BLOCK_BYTES = 64 << 20  # StoredArray.blocks reads this much at a time


@dataclass(frozen=True)
class StoredArray:
    """An array's shape and dtype as declared by its header; ``load()`` reads it (after the caller's checks)."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    load: Callable[[], np.ndarray]
    #: a binary stream of the array's .npy bytes from its magic string on (file or zip member), for row blocks
    open_npy: Callable[[], ContextManager[IO[bytes]]] | None = None

    @property
    def nbytes(self) -> int:
        return array_bytes(self.shape, self.dtype)

    def blocks(self, block_bytes: int | None = None) -> Iterator[tuple[int, int, np.ndarray]]:
        """(first row, first column, block) of a 2-d array, about ``block_bytes`` (default :data:`ROW_BLOCK_BYTES`)
        at a time in file order: row blocks of a C-ordered array, column blocks of a Fortran-ordered one. So a
        (Q, E) matrix never lies in memory whole (issue 18). Truncated data raises ValueError."""
        if self.open_npy is None or len(self.shape) != 2:
            yield 0, 0, self.load()
            return
        with self.open_npy() as stream:
            version = np.lib.format.read_magic(stream)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            _shape, fortran, _dtype = read_header(stream, max_header_size=MAX_NPY_HEADER)
            lines, width = (self.shape[1], self.shape[0]) if fortran else self.shape  # a line: a row, or a column
            line_bytes = width * self.dtype.itemsize
            per_block = max(1, (block_bytes or ROW_BLOCK_BYTES) // max(line_bytes, 1))
            for first in range(0, lines, per_block):
                count = min(per_block, lines - first)
                data = bytearray(count * line_bytes)
                view, got = memoryview(data), 0
                while got < len(data):  # file and zip member streams both read into a buffer
                    read = stream.readinto(view[got:])
                    if not read:
                        raise ValueError(f"truncated data: {len(data) - got:,} bytes missing")
                    got += read
                block = np.frombuffer(data, dtype=self.dtype).reshape(count, width)
                yield (0, first, block.T) if fortran else (first, 0, block)


class ArrayFile:
    """The arrays of a ``.npy`` (one array, named ``default_name``) or ``.npz`` file, from their headers.

    Use as a context manager: the file stays open until the arrays needed are loaded. Raises UserFileError.
    """

    def __init__(self, path: Path | str, wanted: tuple[str, ...], default_name: str) -> None:
        self.path = Path(path)
        self.wanted, self.default_name = wanted, default_name
        self.arrays: dict[str, StoredArray] = {}
        self.members: list[str] = []  # every array name of an npz, for messages
        self._stack = ExitStack()

    def __enter__(self) -> "ArrayFile":
        try:
            self._open()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _open(self) -> None:
        stream = self._stack.enter_context(open_regular(self.path))
        size = stream.seek(0, 2)
        stream.seek(0)
        magic = stream.read(6)
        stream.seek(0)
        if magic == b"\x93NUMPY":
            self.members = [self.default_name]
            self.arrays[self.default_name] = self._npy(stream, size)
        elif magic.startswith(b"PK\x03\x04"):
            self._npz(stream)
        else:
            raise UserFileError(self.path, None, "not a .npy or .npz file (pickles are refused)")

    def _npy(self, stream: IO[bytes], size: int) -> StoredArray:
        shape, dtype, offset = npy_header(stream, self.path)
        needed = array_bytes(shape, dtype)
        if size - offset < needed:
            raise UserFileError(self.path, None, f"truncated: the header declares shape {shape} of {dtype} "
                                                 f"({needed:,} bytes) but {max(size - offset, 0):,} bytes follow it")

        def load() -> np.ndarray:
            stream.seek(0)
            return np.lib.format.read_array(stream, allow_pickle=False)

        def open_npy() -> ContextManager[IO[bytes]]:
            stream.seek(0)
            return _Unclosed(stream)

        return StoredArray(self.default_name, shape, dtype, load, open_npy)

    def _npz(self, stream: IO[bytes]) -> None:
        try:
            archive = self._stack.enter_context(zipfile.ZipFile(stream))
            infos = {info.filename: info for info in archive.infolist()}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise UserFileError(self.path, None, f"not a readable .npz (zip) file ({exc})") from None
        self.members = [name[:-4] if name.endswith(".npy") else name for name in infos]
        for name in self.wanted:
            info = infos.get(f"{name}.npy") or infos.get(name)
            if info is not None:
                self.arrays[name] = self._member(archive, info, name)

    def _member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> StoredArray:
        label = f"`{name}`"
        if info.compress_type == zipfile.ZIP_STORED:
            plausible = info.file_size <= info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            plausible = info.file_size <= DEFLATE_MAX_RATIO * max(info.compress_size, 1)
        else:
            raise UserFileError(self.path, None, f"{label} uses zip compression method {info.compress_type}; only "
                                                 "stored and deflated members (np.savez / savez_compressed) are read")
        if not plausible:
            raise UserFileError(self.path, None, f"{label} declares {info.file_size:,} bytes from "
                                                 f"{info.compress_size:,} compressed: more than the compression can "
                                                 "produce (a zip bomb?)")
        try:
            with archive.open(info) as member:
                shape, dtype, offset = npy_header(member, self.path, label)
        except UserFileError:
            raise
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise UserFileError(self.path, None, f"{label}: cannot read ({exc})") from None
        needed = offset + array_bytes(shape, dtype)
        if info.file_size < needed:
            raise UserFileError(self.path, None, f"{label} is truncated: its header declares shape {shape} of "
                                                 f"{dtype} ({needed:,} bytes) but the member holds {info.file_size:,}")

        def load() -> np.ndarray:
            with archive.open(info) as member:
                return np.lib.format.read_array(member, allow_pickle=False)

        return StoredArray(name, shape, dtype, load, lambda: archive.open(info))


class _Unclosed:
    """The ArrayFile's own stream as a context manager that leaves it open (the ArrayFile closes it)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def __enter__(self) -> IO[bytes]:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        pass


def load_checked(path: Path | str, array: StoredArray) -> np.ndarray:
    """``array.load()``, with failures (corrupt data, CRC errors) as UserFileError."""
    try:
        return array.load()
    except UserFileError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise UserFileError(path, None, f"`{array.name}`: cannot read the data ({shown(str(exc), 200)})") from None
