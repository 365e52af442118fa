"""The campaign backup file: a deterministic .tar.gz of JSON / JSONL tables and .npy arrays, with a manifest.

Rows name what they reference by natural keys (KG name, entity and relation keys, usernames, system names,
qids), or by their line in another table of the same archive (``item``: line of items.jsonl), never by database
ids, so an archive restores into any instance, SQLite or PostgreSQL. Tables are sorted by natural key and
written with sorted keys, arrays as .npy bytes, tar and gzip headers without dates: backing up a restored
campaign gives the same members, byte for byte (the manifest's ``created_at`` apart).

``manifest.json``: ``format``, ``version``, ``campaign``, ``created_at`` and, for every other member, its size
and sha256 (checked on reading: a damaged or edited archive is refused).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from django.db import models

from annotation.services.errors import AnnotationError

FORMAT = "kgpool-campaign-backup"
VERSION = 1
MANIFEST = "manifest.json"


class BackupError(AnnotationError):
    """A backup or restore refused, with a one-line reason; nothing was written."""


def dump_json(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def dump_jsonl(rows: Iterable[dict]) -> bytes:
    return b"".join(dump_json(row) for row in rows)


def dump_array(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def encode(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def encode_row(obj: models.Model, fields: Iterable[str]) -> dict[str, Any]:
    return {name: encode(getattr(obj, name)) for name in fields}


def decode_row(model: type[models.Model], row: dict[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """``row``'s values of ``fields`` as model attribute values (dates parsed)."""
    values = {}
    for name in fields:
        field = model._meta.get_field(name)
        if name not in row and (field.has_default() or field.null):
            continue  # a field added after the backup was written (e.g. a campaign's evidence_policy): its default
        value = row[name]
        if value is not None and isinstance(field, models.DateTimeField):
            value = datetime.fromisoformat(value)
        values[name] = value
    return values


def write_archive(path: Path, members: dict[str, bytes], manifest: dict[str, Any]) -> None:
    """Write ``members`` and their manifest atomically (temp file + rename), without dates in the headers."""
    manifest = {**manifest, "format": FORMAT, "version": VERSION, "members": {
        name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in sorted(members.items())
    }}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, data in [(MANIFEST, dump_json(manifest)), *sorted(members.items())]:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


class Archive:
    """A backup read into memory, checked against its manifest."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            with tarfile.open(self.path, mode="r:gz") as tar:
                self.members = {
                    info.name: tar.extractfile(info).read() for info in tar.getmembers() if info.isfile()
                }
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise BackupError(f"{self.path}: not a readable campaign backup ({exc})") from None
        if MANIFEST not in self.members:
            raise BackupError(f"{self.path}: not a campaign backup (no {MANIFEST})")
        try:
            self.manifest = json.loads(self.members.pop(MANIFEST))
        except ValueError as exc:
            raise BackupError(f"{self.path}: {MANIFEST} is not JSON ({exc})") from None
        if self.manifest.get("format") != FORMAT:
            raise BackupError(f"{self.path}: not a campaign backup (format {self.manifest.get('format')!r})")
        if self.manifest.get("version") != VERSION:
            raise BackupError(f"{self.path}: backup format version {self.manifest.get('version')!r}; "
                              f"this kgpool reads version {VERSION}")
        listed = self.manifest.get("members") or {}
        if set(listed) != set(self.members):
            missing = sorted(set(listed) ^ set(self.members))
            raise BackupError(f"{self.path}: members differ from the manifest ({', '.join(missing[:5])})")
        for name, data in self.members.items():
            if hashlib.sha256(data).hexdigest() != listed[name]["sha256"]:
                raise BackupError(f"{self.path}: {name} is damaged (checksum differs from the manifest)")

    def json(self, name: str) -> Any:
        try:
            return json.loads(self._member(name))
        except ValueError as exc:
            raise BackupError(f"{self.path}: {name} is not JSON ({exc})") from None

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        rows = []
        for number, line in enumerate(self._member(name).splitlines(), start=1):
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise BackupError(f"{self.path}: {name}:{number}: not JSON ({exc})") from None
        return rows

    def array(self, name: str) -> np.ndarray:
        return np.load(io.BytesIO(self._member(name)), allow_pickle=False)

    def _member(self, name: str) -> bytes:
        try:
            return self.members[name]
        except KeyError:
            raise BackupError(f"{self.path}: {name} is missing") from None


# ---------------------------------------------------------------------------------------------------- tables
# Members and the model fields each row carries as they are (references are added by backup.py by natural key).
KG_FIELDS = ["name", "description", "source", "num_entities", "num_relations", "num_train", "num_valid", "num_test",
             "type_labels", "created_at"]
ENTITY_FIELDS = ["index", "key", "name", "description", "url", "wikidata_id", "types"]
RELATION_FIELDS = ["index", "key", "text", "description", "domain_type", "range_type"]
SYSTEM_FIELDS = ["name", "architecture", "origin", "config", "valid_mrr", "test_mrr", "status", "error", "created_at",
                 "updated_at"]
SAMPLE_FIELDS = ["name", "method", "seed", "size", "kl_divergence", "source", "created_at"]
SAMPLE_TRIPLE_FIELDS = ["position", "test_index"]
QUESTION_FIELDS = ["qid", "position", "side"]
RANKING_FIELDS = ["k", "filter", "mrr", "created_at", "updated_at"]
POOL_FIELDS = ["name", "depth", "origin", "chunk_size", "status", "progress_done", "progress_total", "error", "source",
               "created_at", "updated_at", "started_at", "finished_at"]
POOL_ENTRY_FIELDS = ["depth", "num_systems"]
POOL_HIT_FIELDS = ["rank"]
USER_FIELDS = ["first_name", "last_name", "email", "is_active", "date_joined"]
CAMPAIGN_FIELDS = ["name", "description", "allowed_domains", "judgments_per_item", "assignment_timeout_s", "gold_rate",
                   "rushed_factor", "gold_threshold", "evidence_policy", "created_at"]
MEMBERSHIP_FIELDS = ["role", "added_at"]
TEMPLATE_FIELDS = ["text", "is_generated", "updated_at"]
ITEM_FIELDS = ["status", "label", "label_origin", "rule", "num_judgments", "num_active", "queue_key", "is_gold",
               "gold_answer", "flags", "updated_at"]
ASSIGNMENT_FIELDS = ["kind", "state", "handed_out_at", "expires_at", "closed_at"]
JUDGMENT_FIELDS = ["answer", "source_url", "source_domain", "quote", "given_at", "time_on_task_ms", "request_id",
                   "withdrawn_at"]
ADJUDICATION_FIELDS = ["label", "reason", "decided_at"]
EXPERT_REVIEW_FIELDS = ["label", "comment", "given_at"]
AUDIT_ITEM_FIELDS = ["position", "final_label", "final_origin", "seed", "drawn_at"]
LABEL_VERSION_FIELDS = ["kind", "changed_at", "reason", "note", "old_answer", "new_answer", "old_source_url",
                        "new_source_url", "old_text", "new_text"]
# LabelVersion.kind -> the table its subject is a line of
VERSION_SUBJECT_TABLE = {"judgment": "judgments.jsonl", "adjudication": "adjudications.jsonl",
                         "expert": "expert_reviews.jsonl"}
