"""The common case of the triple files read with numpy, without a Python object per line (Django-free).

The common case: every line is `head<TAB>relation<TAB>tail` with LF endings, no blank line, no CR, no key with
surrounding whitespace, keys within the limits and (when vocabularies are given) all known. Tokens are located
from the byte offsets of tabs and line ends, copied into fixed-width byte strings and interned with
``np.unique`` (bytewise order of UTF-8 is code-point order, the order of ``sorted`` on the decoded keys).

Anything else returns None and the caller runs the line-by-line reader, which accepts the other layouts and
reports every problem with its file and line: this module never reports an error itself.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pooling.engine import userfiles

_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16  # rows per block when copying tokens (bounds the temporary index matrix)


class _Tokens:
    """Byte offsets and lengths of one column's tokens in one file's buffer."""

    def __init__(self, buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> None:
        self.buffer, self.starts, self.lengths = buffer, starts, lengths


def _columns(path: Path) -> tuple[_Tokens, _Tokens, _Tokens] | None:
    try:
        raw = userfiles.read_bytes(path)
        userfiles.check_line_lengths(path, raw)
        userfiles.decode_utf8(path, raw)  # strict UTF-8 check only; the text itself is not kept
    except userfiles.UserFileError:
        return None
    skip = len(_BOM) if raw.startswith(_BOM) else 0
    if b"\r" in raw or b"\x00" in raw or b"\n\n" in raw or raw[skip:skip + 1] in (b"", b"\n"):
        return None
    buffer = np.frombuffer(raw, dtype=np.uint8)[skip:]
    offset_type = np.int32 if buffer.size < 2**31 - 1 else np.int64  # half the memory of the offsets
    ends = np.flatnonzero(buffer == 10).astype(offset_type)
    if ends.size == 0 or ends[-1] != buffer.size - 1:
        ends = np.append(ends, np.array([buffer.size], dtype=offset_type))  # last line without its line end
    tabs = np.flatnonzero(buffer == 9).astype(offset_type)
    if tabs.size != 2 * ends.size:
        return None
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    first, second = tabs[0::2], tabs[1::2]
    # Exactly two tabs inside each line, and three non-empty tokens around them.
    if not (np.all(first > starts) and np.all(second > first + 1) and np.all(ends > second + 1)):
        return None
    return (_Tokens(buffer, starts, first - starts), _Tokens(buffer, first + 1, second - first - 1),
            _Tokens(buffer, second + 1, ends - second - 1))


def _fixed_width(columns: list[_Tokens]) -> np.ndarray:
    """All tokens of the columns, in order, as one numpy byte-string array (trailing NULs cannot occur)."""
    width = max(int(column.lengths.max()) for column in columns)
    total = sum(column.starts.size for column in columns)
    out = np.zeros((total, width), dtype=np.uint8)
    offsets = np.arange(width)
    row = 0
    for column in columns:
        last = column.buffer.size - 1
        for begin in range(0, column.starts.size, _CHUNK):
            starts = column.starts[begin:begin + _CHUNK]
            lengths = column.lengths[begin:begin + _CHUNK]
            index = np.minimum(starts[:, None] + offsets, last)
            block = column.buffer[index]
            block[offsets >= lengths[:, None]] = 0
            out[row:row + starts.size] = block
            row += starts.size
    return out.view(f"S{width}").ravel()


def _intern(tokens: np.ndarray, vocabulary: list[str] | None, limit: int) -> tuple[list[str], np.ndarray] | None:
    """(keys, index of each token): sorted distinct keys, or the given vocabulary's order."""
    distinct, inverse = np.unique(tokens, return_inverse=True)
    keys = [value.decode("utf-8") for value in distinct.tolist()]
    if any(len(key) > limit or key != key.strip() for key in keys):
        return None
    if vocabulary is None:
        return keys, inverse.astype(np.int64, copy=False).ravel()
    position = {key: index for index, key in enumerate(vocabulary)}
    try:
        mapping = np.fromiter((position[key] for key in keys), dtype=np.int64, count=len(keys))
    except KeyError:
        return None
    return vocabulary, mapping[inverse.ravel()]


def read_splits(paths: dict[str, Path], entity_limit: int, relation_limit: int, entity_vocab: list[str] | None,
                relation_vocab: list[str] | None) -> tuple[list[str], list[str], dict[str, np.ndarray]] | None:
    """(entity keys, relation keys, split -> int64 (n, 3) in file order with repeats) or None (not the common
    case: read line by line)."""
    parsed = {}
    for split, path in paths.items():
        parsed[split] = _columns(path)
        if parsed[split] is None:
            return None
    sizes = {split: columns[0].starts.size for split, columns in parsed.items()}
    entity_tokens = _fixed_width([column for columns in parsed.values() for column in (columns[0], columns[2])])
    relation_tokens = _fixed_width([columns[1] for columns in parsed.values()])
    # the files' bytes and token offsets go before the sorts: they were half of the import's peak memory
    del parsed
    entities = _intern(entity_tokens, entity_vocab, entity_limit)
    del entity_tokens
    if entities is None:
        return None
    relations = _intern(relation_tokens, relation_vocab, relation_limit)
    del relation_tokens
    if relations is None:
        return None
    entity_keys, entity_index = entities
    relation_keys, relation_index = relations
    splits: dict[str, np.ndarray] = {}
    entity_at = relation_at = 0
    for split, size in sizes.items():
        encoded = np.empty((size, 3), dtype=np.int64)
        encoded[:, 0] = entity_index[entity_at:entity_at + size]
        encoded[:, 2] = entity_index[entity_at + size:entity_at + 2 * size]
        encoded[:, 1] = relation_index[relation_at:relation_at + size]
        entity_at += 2 * size
        relation_at += size
        splits[split] = encoded
    return entity_keys, relation_keys, splits
