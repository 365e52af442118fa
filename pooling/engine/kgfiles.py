"""Read a knowledge graph from the common on-disk layouts, Django-free.

A dataset folder holds `train.txt valid.txt test.txt` (`h r t`, tab or space separated, CRLF tolerated) and,
optionally, entity and relation metadata in the formats of the public KGC datasets:

- `entity_names.tsv` (`id name`) or KG-BERT's `entity2text.txt`,
- `entity_wikidata.json` (id -> label, description, alternatives, wikidata_id, wikipedia),
- `relation_types.tsv` (`relation domain_type range_type`), `relation_text.tsv` / `relation2text.txt`,
- CoDEx `entity2types.json`, `types.json` and `relations.json` (also looked for under `en/`).

Every problem is reported as a `KGFormatError` naming the file and the 1-based line, before anything is
written anywhere: the reader returns plain data and the caller imports it in one transaction. Files are read
through `pooling.engine.userfiles` (regular files only, bounded lines and JSON); keys and types longer than the
database columns (`FieldLimits`) are refused with their line instead of failing the write.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pooling.engine import kgfast, userfiles
from pooling.engine.userfiles import shown

SPLITS = ("train", "valid", "test")


class KGFormatError(ValueError):
    """Bad input in a dataset file; the message names the file and the line."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


@dataclass(frozen=True)
class FieldLimits:
    """Longest keys and type names the database stores (the importer passes the model fields' lengths)."""

    entity_key: int = 255
    relation_key: int = 500
    type_name: int = 255


@dataclass(slots=True)
class EntityInfo:
    name: str = ""
    description: str = ""
    url: str = ""
    wikidata_id: str = ""
    types: list[str] = field(default_factory=list)


class EntityMetadata(Mapping[str, EntityInfo]):
    """Every entity's metadata, keyed by entity key, holding an object only for the entities a metadata file
    describes: the others read as their key for a name and nothing else. A graph of millions of entities without
    names (issue 18) kept one object per entity, a third of the import's memory at 1 M triples."""

    def __init__(self, keys: list[str]) -> None:
        self._keys = keys
        self._known: set[str] | None = None  # built on the first lookup of a key without metadata
        self._stored: dict[str, EntityInfo] = {}

    def _is_entity(self, key: object) -> bool:
        if self._known is None:
            self._known = set(self._keys)
        return key in self._known

    def __contains__(self, key: object) -> bool:
        return self._is_entity(key)  # every stored key is an entity's

    def __getitem__(self, key: str) -> EntityInfo:
        info = self.stored(key)
        if info is not None:
            return info
        if self._is_entity(key):
            return EntityInfo(name=key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def stored(self, key: str) -> EntityInfo | None:
        """The entity's metadata when a file gave some (its name defaults to the key), else None."""
        return self._stored.get(key)

    def to_fill(self, key: str) -> EntityInfo:
        """The object a metadata file fills in for ``key``, an entity (created on first use; name "" until the
        reader's end, which gives a still empty name the key)."""
        info = self._stored.get(key)
        if info is None:
            info = self._stored[key] = EntityInfo()
        return info

    def name_missing_by_key(self) -> None:
        for key, info in self._stored.items():
            info.name = info.name or key


@dataclass
class RelationInfo:
    text: str = ""
    description: str = ""
    domain_type: str = ""
    range_type: str = ""


@dataclass
class KGData:
    """A parsed dataset: vocabularies, triples as index arrays, and metadata keyed by entity/relation key."""

    entity_keys: list[str]
    relation_keys: list[str]
    splits: dict[str, np.ndarray]  # split -> int64 array (n, 3) of (head, relation, tail) indices
    entities: EntityMetadata
    relations: dict[str, RelationInfo]
    type_labels: dict[str, str]
    duplicates_skipped: dict[str, int]
    unused_metadata: int  # metadata rows about entities/relations that occur in no triple (ignored)

    @property
    def counts(self) -> dict[str, int]:
        return {
            "entities": len(self.entity_keys),
            "relations": len(self.relation_keys),
            **{split: len(self.splits[split]) for split in SPLITS},
        }


@dataclass
class MetadataFiles:
    """Optional metadata files; None means "look for the conventional name in the dataset folder"."""

    entity_names: Path | None = None
    wikidata: Path | None = None
    relation_types: Path | None = None
    relation_text: Path | None = None
    entity_types: Path | None = None
    type_labels: Path | None = None
    relation_labels: Path | None = None
    entity_vocab: Path | None = None
    relation_vocab: Path | None = None


_CONVENTIONAL_NAMES: dict[str, tuple[str, ...]] = {
    "entity_names": ("entity_names.tsv", "entity2text.txt"),
    "wikidata": ("entity_wikidata.json",),
    "relation_types": ("relation_types.tsv",),
    "relation_text": ("relation_text.tsv", "relation2text.txt"),
    "entity_types": ("entity2types.json",),
    "type_labels": ("types.json", "en/types.json"),
    "relation_labels": ("relations.json", "en/relations.json"),
}


def read_lines(path: Path, *, max_line_bytes: int = userfiles.MAX_LINE_BYTES,
               max_bytes: int | None = None) -> list[str]:
    """The file's lines without line endings (LF or CRLF), as strict UTF-8 (a regular file of at most
    ``max_bytes``, lines of at most ``max_line_bytes``)."""
    try:
        raw = userfiles.read_bytes(path, max_bytes=max_bytes)
        userfiles.check_line_lengths(path, raw, max_line_bytes=max_line_bytes)
        text = userfiles.decode_utf8(path, raw)
    except userfiles.UserFileError as exc:
        raise KGFormatError(exc.path, exc.line, exc.message) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:  # binary content; PostgreSQL text cannot hold NUL either
        raise KGFormatError(path, text.count("\n", 0, nul) + 1, "contains a NUL byte (binary file?)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def split_fields(line: str) -> list[str]:
    """Tab-separated when the line has a tab (names may hold spaces), else whitespace-separated."""
    if "\t" in line:
        return [part.strip() for part in line.split("\t")]
    return line.split()


def _check_key(path: Path, number: int, key: str, what: str, limit: int) -> None:
    if len(key) > limit:
        raise KGFormatError(path, number, f"{what} {shown(key)} is {len(key):,} characters long; "
                                          f"{what}s are at most {limit}")


def read_triple_file(path: Path, limits: FieldLimits = FieldLimits()) -> list[tuple[str, str, str, int]]:
    """(head, relation, tail, line number) for every non-blank line."""
    rows = []
    entity_limit, relation_limit = limits.entity_key, limits.relation_key
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        parts = split_fields(line)
        if len(parts) != 3:
            raise KGFormatError(path, number, f"expected 3 columns (head relation tail), found {len(parts)}")
        if not all(parts):  # "a<TAB><TAB>b" has 3 columns: "found 3" said nothing
            empty = ("head", "relation", "tail")[parts.index("")]
            raise KGFormatError(path, number, f"the {empty} column is empty (expected head relation tail)")
        if len(parts[0]) > entity_limit or len(parts[2]) > entity_limit or len(parts[1]) > relation_limit:
            for key, what, limit in ((parts[0], "entity key", entity_limit), (parts[1], "relation key", relation_limit),
                                     (parts[2], "entity key", entity_limit)):
                _check_key(path, number, key, what, limit)
        rows.append((parts[0], parts[1], parts[2], number))
    if not rows:
        raise KGFormatError(path, None, "the split is empty")
    return rows


def read_keyed_table(path: Path, min_columns: int, what: str) -> dict[str, tuple[list[str], int]]:
    """key -> (remaining columns, line); duplicate keys and short lines are errors."""
    table: dict[str, tuple[list[str], int]] = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.split("\t") if "\t" in line else line.split(None, min_columns - 1)
        parts = [part.strip() for part in parts]
        if len(parts) < min_columns or not parts[0]:
            raise KGFormatError(path, number, f"expected at least {min_columns} tab-separated columns ({what})")
        key = parts[0]
        if key in table:
            raise KGFormatError(path, number, f"duplicate entry {shown(key)} (first on line {table[key][1]})")
        table[key] = (parts[1:], number)
    return table


def read_json_object(path: Path) -> dict:
    """A JSON object (at most userfiles.MAX_JSON_BYTES, one long line allowed); strings holding NUL or lone
    surrogates (which the database cannot store) are refused where they are used, see :func:`_json_text`."""
    limit = userfiles.MAX_JSON_BYTES
    text = "\n".join(read_lines(path, max_line_bytes=limit, max_bytes=limit))
    try:
        data = userfiles.read_json(path, text)
    except userfiles.UserFileError as exc:
        raise KGFormatError(exc.path, exc.line, exc.message) from None
    if not isinstance(data, dict):
        raise KGFormatError(path, 1, "expected a JSON object keyed by id")
    return data


def _json_text(path: Path, key: str, value: object, limit: int | None = None) -> str:
    """``str(value)`` of a JSON entry, cut to ``limit``; NUL characters and lone surrogates (from ``\\u0000`` /
    ``\\ud800`` escapes) are refused: neither PostgreSQL text nor UTF-8 can hold them."""
    text = str(value)
    if "\x00" in text:
        raise KGFormatError(path, None, f"entry {shown(key)} holds a NUL character (\\u0000)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise KGFormatError(path, None, f"entry {shown(key)} holds a lone surrogate (not valid Unicode)") from None
    return text if limit is None else text[:limit]


def read_vocab(path: Path, what: str = "entity key", limit: int = FieldLimits.entity_key) -> list[str]:
    """First column of each non-blank line; duplicates and keys longer than ``limit`` are errors."""
    table = read_keyed_table(path, 1, "one id per line")
    for key, (_columns, number) in table.items():
        _check_key(path, number, key, what, limit)
    return list(table)


def resolve_metadata(folder: Path, files: MetadataFiles) -> dict[str, Path | None]:
    resolved: dict[str, Path | None] = {}
    for attr, names in _CONVENTIONAL_NAMES.items():
        explicit = getattr(files, attr)
        if explicit is not None:
            if not Path(explicit).exists():  # other kinds (FIFO, directory...) are refused by the reader
                raise KGFormatError(explicit, None, "file not found")
            resolved[attr] = Path(explicit)
            continue
        resolved[attr] = next((folder / name for name in names if (folder / name).exists()), None)
    return resolved


def _index(keys: list[str]) -> dict[str, int]:
    return {key: index for index, key in enumerate(keys)}


def read_kg(folder: Path | str, files: MetadataFiles | None = None, limits: FieldLimits = FieldLimits()) -> KGData:
    """Parse a dataset folder; raises KGFormatError on the first problem found."""
    folder = Path(folder)
    files = files or MetadataFiles()
    if not folder.is_dir():
        raise KGFormatError(folder, None, "dataset folder not found")

    try:
        entity_vocab = read_vocab(files.entity_vocab, "entity key", limits.entity_key) if files.entity_vocab else None
        relation_vocab = (read_vocab(files.relation_vocab, "relation key", limits.relation_key)
                          if files.relation_vocab else None)
    except KGFormatError:
        _read_splits_by_line(folder, limits, None, None)  # a problem in the triple files is reported first
        raise
    fast = kgfast.read_splits({split: folder / f"{split}.txt" for split in SPLITS}, limits.entity_key,
                              limits.relation_key, entity_vocab, relation_vocab)
    if fast is None:  # another layout, or a problem to report with its line
        entity_keys, relation_keys, encoded_splits = _read_splits_by_line(folder, limits, entity_vocab, relation_vocab)
    else:
        entity_keys, relation_keys, encoded_splits = fast
    splits: dict[str, np.ndarray] = {}
    duplicates: dict[str, int] = {}
    for split, encoded in encoded_splits.items():
        # Keep file order (a triple's position is its line among the split's triples: samples are drawn by
        # test index) and drop later repeats of a triple.
        keep = _first_occurrences(encoded, len(entity_keys), len(relation_keys))
        duplicates[split] = len(encoded) - len(keep)
        splits[split] = encoded if len(keep) == len(encoded) else encoded[keep]
    del encoded_splits

    located = resolve_metadata(folder, files)
    entities = EntityMetadata(entity_keys)
    relations: dict[str, RelationInfo] = {key: RelationInfo() for key in relation_keys}
    type_labels: dict[str, str] = {}
    unused = 0

    if located["entity_names"]:
        for key, (columns, _line) in read_keyed_table(located["entity_names"], 2, "id name").items():
            if key not in entities:
                unused += 1
                continue
            entities.to_fill(key).name = columns[0][:500]
    if located["wikidata"]:
        path = located["wikidata"]
        for key, record in read_json_object(path).items():
            if key not in entities:
                unused += 1
                continue
            if not isinstance(record, dict):
                raise KGFormatError(path, None, f"entry {shown(key)} is not an object")
            info = entities.to_fill(key)
            info.name = info.name or _json_text(path, key, record.get("label") or "", 500)
            info.description = _json_text(path, key, record.get("description") or "")
            info.wikidata_id = _json_text(path, key, record.get("wikidata_id") or "", 32)
            info.url = _json_text(path, key, record.get("wikipedia") or "", 500)
    if located["entity_types"]:
        path = located["entity_types"]
        for key, types in read_json_object(path).items():
            if key not in entities:
                unused += 1
                continue
            if not isinstance(types, list):
                raise KGFormatError(path, None, f"types of {shown(key)} are not a list")
            entities.to_fill(key).types = [_json_text(path, key, type_id) for type_id in types]
    if located["type_labels"]:
        path = located["type_labels"]
        for key, record in read_json_object(path).items():
            label = record.get("label", "") if isinstance(record, dict) else record
            type_labels[_json_text(path, key, key)] = _json_text(path, key, label)
    if located["relation_types"]:
        path = located["relation_types"]
        for key, (columns, line) in read_keyed_table(path, 3, "relation domain range").items():
            if key not in relations:
                unused += 1
                continue
            for type_name in columns[:2]:
                if len(type_name) > limits.type_name:
                    raise KGFormatError(path, line, f"type {shown(type_name)} is {len(type_name):,} characters "
                                                    f"long; types are at most {limits.type_name}")
            relations[key].domain_type, relations[key].range_type = columns[0], columns[1]
    if located["relation_text"]:
        for key, (columns, _line) in read_keyed_table(located["relation_text"], 2, "relation text").items():
            if key not in relations:
                unused += 1
                continue
            relations[key].text = columns[0][:500]
    if located["relation_labels"]:
        for key, record in read_json_object(located["relation_labels"]).items():
            if key not in relations:
                unused += 1
                continue
            if isinstance(record, dict):
                path = located["relation_labels"]
                relations[key].text = relations[key].text or _json_text(path, key, record.get("label") or "", 500)
                relations[key].description = _json_text(path, key, record.get("description") or "")
    entities.name_missing_by_key()
    return KGData(entity_keys, relation_keys, splits, entities, relations, type_labels, duplicates, unused)


def _first_occurrences(encoded: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    """Sorted positions of the first occurrence of each distinct row (one int64 key per triple when it fits)."""
    if len(encoded) == 0:
        return np.arange(0)
    if num_entities * num_entities * max(num_relations, 1) < 2**62:
        keys = (encoded[:, 0] * num_relations + encoded[:, 1]) * num_entities + encoded[:, 2]
        _unique, first_seen = np.unique(keys, return_index=True)
    else:
        _unique, first_seen = np.unique(encoded, axis=0, return_index=True)
    first_seen.sort()
    return first_seen


def _read_splits_by_line(folder: Path, limits: FieldLimits, entity_vocab: list[str] | None,
                         relation_vocab: list[str] | None) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
    """The general reader: any layout the format allows, every problem reported with its file and line."""
    raw_splits = {split: read_triple_file(folder / f"{split}.txt", limits) for split in SPLITS}
    if entity_vocab is not None:
        entity_keys = entity_vocab
    else:
        entity_keys = sorted({row[i] for rows in raw_splits.values() for row in rows for i in (0, 2)})
    if relation_vocab is not None:
        relation_keys = relation_vocab
    else:
        relation_keys = sorted({row[1] for rows in raw_splits.values() for row in rows})
    entity_index, relation_index = _index(entity_keys), _index(relation_keys)
    splits: dict[str, np.ndarray] = {}
    for split, rows in raw_splits.items():
        path = folder / f"{split}.txt"
        encoded = np.empty((len(rows), 3), dtype=np.int64)
        for position, (head, relation, tail, number) in enumerate(rows):
            try:
                encoded[position] = (entity_index[head], relation_index[relation], entity_index[tail])
            except KeyError:
                unknown = next(
                    f"{kind} {shown(key)}"
                    for kind, key, vocab in (
                        ("entity", head, entity_index),
                        ("relation", relation, relation_index),
                        ("entity", tail, entity_index),
                    )
                    if key not in vocab
                )
                raise KGFormatError(path, number, f"unknown {unknown} (not in the given vocabulary)") from None
        splits[split] = encoded
    return entity_keys, relation_keys, splits
