"""Reading the files users hand to the importers, defensively (Django-free).

Every importer reads its input through here, so that a hostile or broken file fails the same way everywhere:
early, in one line that names the file (and the line where there is one), before anything large is allocated.

- Only regular files are read. The file is opened non-blocking and its type checked on the open descriptor:
  a FIFO would otherwise block forever, ``/dev/zero`` never ends, a directory is not a file.
- Text is strict UTF-8; a line is at most :data:`MAX_LINE_BYTES` (counted without decoding, with numpy).
- JSON is at most :data:`MAX_JSON_BYTES` and refused when nested deeper than the parser's recursion allows.
- Sizes declared inside a file (``.npy`` headers) are read without loading the data
  (:func:`npy_header`), so callers check them against what they expect before allocating.
- Values from the file are echoed in messages through :func:`shown` (repr, shortened): a 30 MB key or a
  terminal escape sequence never reaches the terminal as such.
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

MAX_LINE_BYTES = 1 << 20  # 1 MiB: far above any dataset, run, pool or label line (entity descriptions included)
MAX_JSON_BYTES = 1 << 30  # 1 GiB: a JSON metadata file is parsed whole into Python objects (~10x its size)
MAX_NPY_HEADER = 10_000  # numpy's own default limit on .npy header sizes
_SCAN_BLOCK = 1 << 24  # bytes per numpy pass when scanning for long lines / fields (bounds the scan's memory)
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
)


class UserFileError(ValueError):
    """A file users gave cannot be read as expected; ``str()`` is ``PATH:LINE: message`` (``PATH: message``
    without a line). Importers turn it into their own error type with the same text."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.where = f"{path}:{line}" if line is not None else str(path)  # PATH:LINE or PATH
        super().__init__(f"{self.where}: {message}")
        self.path, self.line, self.message = str(path), line, message


def shown(value: object, limit: int = 60) -> str:
    """``repr`` of a value taken from a user file, shortened to about ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...' ({len(str(value)):,} characters)"


def open_regular(path: Path | str) -> IO[bytes]:
    """The file opened for binary reading; UserFileError when missing, unreadable or not a regular file.

    Opened with O_NONBLOCK, so that opening a FIFO returns at once, and its type checked on the descriptor
    (no window between the check and the open)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise UserFileError(path, None, "file not found") from None
    except OSError as exc:
        raise UserFileError(path, None, f"cannot open: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
            raise UserFileError(path, None, f"is {kind}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(path: Path | str, *, max_bytes: int | None = None) -> bytes:
    """The whole content of a regular file (at most ``max_bytes``)."""
    with open_regular(path) as stream:
        try:
            size = os.fstat(stream.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise UserFileError(path, None, f"is {size:,} bytes, more than the {max_bytes:,} allowed")
            # read(n) allocates n bytes first: ask for the real size, not for the limit
            parts = [stream.read(size + 1)]
            total = len(parts[0])
            while total > size:  # grew while being read (or a size-0 special file): go on in bounded steps
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
                if max_bytes is not None and total > max_bytes:
                    raise UserFileError(path, None, f"is more than the {max_bytes:,} bytes allowed")
        except OSError as exc:
            raise UserFileError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_stream(stream: IO[bytes], name: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> bytes:
    """All of a stream that is not a file (standard input), refused as soon as its last line grows past
    ``max_line_bytes``: ``/dev/zero`` (no line end, ever) ends in one line instead of filling the memory.

    Lines closed inside the stream are left to :func:`check_line_lengths` on the whole content."""
    parts: list[bytes] = []
    closed_lines = 0  # line ends read so far
    open_line = 0  # bytes read since the last line end
    while chunk := stream.read(1 << 20):
        parts.append(chunk)
        last_end = chunk.rfind(b"\n")
        if last_end < 0:
            open_line += len(chunk)
        else:
            closed_lines += chunk.count(b"\n")
            open_line = len(chunk) - last_end - 1
        if open_line > max_line_bytes:
            raise UserFileError(name, closed_lines + 1, f"line of more than {max_line_bytes:,} bytes (not a text "
                                                        "file of this format?)")
    return b"".join(parts)


def _line_of_offset(data: bytes, offset: int, universal_newlines: bool) -> int:
    """1-based line of byte ``offset``: lines end with \\n (also \\r and \\r\\n when ``universal_newlines``)."""
    line = data.count(b"\n", 0, offset) + 1
    if universal_newlines:
        line += data.count(b"\r", 0, offset) - data.count(b"\r\n", 0, offset)
    return line


def _long_runs(data: bytes, separators: bytes, limit: int) -> Iterator[tuple[int, int]]:
    """(start, stop) byte offsets of every run of non-separator bytes longer than ``limit`` bytes, in order.

    numpy over blocks of the buffer: ~0.15 s for a 40 MB run file, memory bounded by the block size."""
    is_separator = np.zeros(256, dtype=bool)
    is_separator[list(separators)] = True
    view = np.frombuffer(data, dtype=np.uint8)
    previous = -1  # offset of the last separator seen
    for start in range(0, view.size, _SCAN_BLOCK):
        separator_offsets = np.flatnonzero(is_separator[view[start:start + _SCAN_BLOCK]]) + start
        if separator_offsets.size == 0:
            continue
        bounds = np.concatenate(([previous], separator_offsets))
        for index in np.flatnonzero(np.diff(bounds) - 1 > limit):
            yield int(bounds[index]) + 1, int(bounds[index + 1])
        previous = int(separator_offsets[-1])
    if view.size - previous - 1 > limit:
        yield previous + 1, view.size


def check_line_lengths(path: Path | str, data: bytes, *, max_line_bytes: int = MAX_LINE_BYTES,
                       universal_newlines: bool = False) -> None:
    """UserFileError naming the first line longer than ``max_line_bytes`` bytes."""
    ends = b"\r\n" if universal_newlines else b"\n"
    for start, stop in _long_runs(data, ends, max_line_bytes):
        line = _line_of_offset(data, start, universal_newlines)
        raise UserFileError(path, line, f"line of {stop - start:,} bytes, longer than the {max_line_bytes:,} "
                                        "allowed (not a text file of this format?)")


def check_field_lengths(path: Path | str, data: bytes, max_chars: int, what: str, *,
                        separators: bytes = b" \t\r\n") -> None:
    """UserFileError naming the first line with a field longer than ``max_chars`` characters (fields are
    separated by ``separators``: by default spaces, tabs and line ends)."""
    for start, stop in _long_runs(data, separators, max_chars):  # bytes >= characters: candidates only
        chars = len(data[start:stop].decode("utf-8", "replace"))
        if chars > max_chars:
            line = _line_of_offset(data, start, universal_newlines=False)
            raise UserFileError(path, line, f"a field of {chars:,} characters: {what} are at most {max_chars}")


def decode_utf8(path: Path | str, data: bytes, *, universal_newlines: bool = False) -> str:
    """Strict UTF-8 text; a decoding error names its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = _line_of_offset(data, exc.start, universal_newlines)
        raise UserFileError(path, line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})") from None


def read_text(path: Path | str, *, universal_newlines: bool = False, max_line_bytes: int = MAX_LINE_BYTES) -> str:
    """A regular file's text, strict UTF-8, lines of at most ``max_line_bytes``.

    With ``universal_newlines`` \\r\\n and lone \\r become \\n (what ``Path.read_text`` does), so that the
    caller's ``split("\\n")`` numbers lines as an editor does; otherwise the text is returned as is. A byte order
    mark at the start (Windows editors write one) is left out: it is no part of the first line's first field
    (an import of labels read it so and dropped that line as an unknown triple).
    """
    data = read_bytes(path)
    check_line_lengths(path, data, max_line_bytes=max_line_bytes, universal_newlines=universal_newlines)
    text = decode_utf8(path, data, universal_newlines=universal_newlines).removeprefix("\ufeff")
    if universal_newlines and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_json(path: Path | str, text: str | None = None, *, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parsed JSON of a regular file (or of ``text`` read from it) of at most ``max_bytes``; refuses
    nesting deeper than the parser's recursion limit with a clear message instead of a RecursionError."""
    if text is None:
        text = decode_utf8(path, read_bytes(path, max_bytes=max_bytes))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserFileError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise UserFileError(path, None, "invalid JSON: nested too deeply (more than a few hundred levels)") from None


def npy_header(stream: IO[bytes], path: Path | str, what: str = "") -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header length in bytes) of the ``.npy`` array at the stream's position, read without
    loading the data. Refuses object (pickled) dtypes and malformed headers."""
    label = f"{what}: " if what else ""
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(stream, max_header_size=MAX_NPY_HEADER)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(stream, max_header_size=MAX_NPY_HEADER)
        else:
            raise UserFileError(path, None, f"{label}unsupported .npy format version {version}")
        offset = stream.tell()
    except UserFileError:
        raise
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise UserFileError(path, None, f"{label}not a readable .npy array header ({exc})") from None
    if dtype.hasobject:
        raise UserFileError(path, None, f"{label}holds pickled object arrays, which are refused; save plain "
                                        "numeric / string arrays")
    return tuple(int(n) for n in shape), dtype, int(offset)


def array_bytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Bytes of the data of an array of that shape and dtype (Python ints: no overflow)."""
    count = 1
    for n in shape:
        count *= n
    return count * dtype.itemsize
