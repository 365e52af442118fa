"""Writes: files sent through the API and imported in the background (``Upload`` rows).

The request stores the files under ``STORAGE_DIR/uploads/<id>/`` (streamed to disk, each at most
``KGPOOL_MAX_UPLOAD_BYTES``) and queues a Celery task on commit; the task runs the same service as the command
(``import_kg``, ``import_scores``, ``import_run``, ``import_checkpoint``), which reads the files as hostile input
(``pooling.engine.userfiles``), and records its progress and outcome on the row: ``done`` with the KG or system,
or ``failed`` with the one-line reason (nothing imported). In the embedded mode the task runs in-process.
"""
from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from pooling import task_names
from pooling.models import KnowledgeGraph, Sample, System, Upload
from pooling.services.names import checked_name
from pooling.storage import storage_path

#: The KG files an upload may hold: the three splits and the metadata files of ``import_kg`` (stored under
#: their conventional names, so the reader finds them as beside a dataset).
KG_FILES = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt", "entity_names": "entity_names.tsv",
            "wikidata": "entity_wikidata.json", "relation_types": "relation_types.tsv",
            "relation_text": "relation_text.tsv", "entity_types": "entity2types.json", "type_labels": "types.json",
            "relation_labels": "relations.json"}
SYSTEM_FILES = {Upload.Kind.SCORES: ("scores", "entities", "questions"), Upload.Kind.RUN: ("run", "questions"),
                Upload.Kind.CHECKPOINT: ("checkpoint",)}


class UploadError(Exception):
    """An upload refused before anything was stored (one line)."""


class FileLike(Protocol):
    name: str
    size: int

    def chunks(self) -> Iterable[bytes]: ...


def max_bytes() -> int:
    return int(getattr(settings, "KGPOOL_MAX_UPLOAD_BYTES", 2 << 30))


def create_upload(kind: str, name: str, files: Mapping[str, FileLike], *, kg: KnowledgeGraph | None = None,
                  sample: Sample | None = None, params: dict[str, Any] | None = None, user=None) -> Upload:
    """Store ``files`` and queue their import; UploadError (nothing stored) when they cannot be imported."""
    if kind == Upload.Kind.KG:
        checked_name("knowledge graph", name, UploadError)
        if KnowledgeGraph.objects.filter(name=name).exists():
            raise UploadError(f"a knowledge graph named {name!r} already exists")
        if Upload.objects.filter(kind=kind, name=name, status__in=("pending", "running")).exists():
            raise UploadError(f"knowledge graph {name!r} is being imported already")
        allowed, required = set(KG_FILES), {"train", "valid", "test"}
    else:
        checked_name("system", name, UploadError)
        if kg is None or (kind != Upload.Kind.CHECKPOINT and sample is None):
            raise UploadError("a system upload needs its knowledge graph" + ("" if kind == "checkpoint" else
                                                                            " and sample"))
        if System.objects.filter(kg=kg, name=name).exists() or Upload.objects.filter(
                kg=kg, name=name, status__in=("pending", "running")).exclude(kind=Upload.Kind.KG).exists():
            raise UploadError(f"a system named {name!r} already exists in {kg.name}")
        allowed, required = set(SYSTEM_FILES[kind]), {SYSTEM_FILES[kind][0]}
    unknown = sorted(set(files) - allowed)
    if unknown:
        raise UploadError(f"unexpected file {unknown[0]!r}; a {kind} upload takes {', '.join(sorted(allowed))}")
    missing = sorted(required - set(files))
    if missing:
        raise UploadError(f"a {kind} upload needs the file(s) {', '.join(missing)}")
    for role, file in files.items():
        if file.size > max_bytes():
            raise UploadError(f"{role}: {file.size} bytes, over the upload limit of {max_bytes()} bytes")
    folder = f"uploads/{uuid.uuid4().hex}"
    stored: dict[str, str] = {}
    try:
        for role, file in files.items():
            stored[role] = _store(folder, _file_name(kind, role, file.name), file)
        with transaction.atomic():
            upload = Upload.objects.create(kind=kind, name=name, kg=kg, sample=sample, folder=folder, created_by=user,
                                           params={**(params or {}), "files": stored})
            transaction.on_commit(lambda: dispatch(upload.pk), robust=True)  # failures are recorded on the row
    except BaseException:
        shutil.rmtree(storage_path(folder), ignore_errors=True)
        raise
    return upload


def _file_name(kind: str, role: str, original: str) -> str:
    if kind == Upload.Kind.KG:
        return KG_FILES[role]
    suffix = "".join(re.findall(r"\.[A-Za-z0-9]{1,8}", (original or "").rsplit("/", 1)[-1])[-2:]).lower()
    return f"{role}{suffix or '.txt'}"


def _store(folder: str, name: str, file: FileLike) -> str:
    path = storage_path(f"{folder}/{name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "wb") as out:
        for chunk in file.chunks():
            written += len(chunk)
            if written > max_bytes():
                raise UploadError(f"{name}: over the upload limit of {max_bytes()} bytes")
            out.write(chunk)
    return name


def dispatch(upload_id: int) -> None:
    """Queue the upload's import (KGs on the default queue; systems, which rank with the engine, on the GPU
    queue)."""
    from celery import signature

    kind = Upload.objects.values_list("kind", flat=True).get(pk=upload_id)
    name = task_names.IMPORT_KG_UPLOAD if kind == Upload.Kind.KG else task_names.RANK_SYSTEM_UPLOAD
    signature(name, args=(upload_id,)).delay()


def run_upload(upload: Upload) -> Upload:
    """Import the upload's files with the service of its kind; records progress, then done or failed.

    A refused file (the services' one-line errors) marks the upload failed and returns; anything else marks it
    failed and is raised again (the task decides about retries)."""
    from pooling.engine.kgfiles import KGFormatError
    from pooling.services.kg_import import KGImportError
    from pooling.services.rankings import RunImportError

    claimed = Upload.objects.filter(pk=upload.pk, status__in=(Upload.Status.PENDING, Upload.Status.RUNNING)).update(
        status=Upload.Status.RUNNING, stage="starting", error="")
    upload.refresh_from_db()
    if not claimed:
        return upload  # done or failed already (a redelivered task)

    def progress(stage: str, done: int, total: int) -> None:
        Upload.objects.filter(pk=upload.pk).update(stage=stage[:100], progress_done=max(done, 0),
                                                   progress_total=max(total, 0))

    try:
        outcome = _import(upload, progress)
    except (KGFormatError, KGImportError, RunImportError, UploadError) as exc:
        _finish(upload, Upload.Status.FAILED, error=str(exc).replace(str(storage_path(upload.folder)) + "/", ""))
        return upload
    except BaseException as exc:
        _finish(upload, Upload.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    _finish(upload, Upload.Status.DONE, **outcome)
    return upload


def _import(upload: Upload, progress) -> dict[str, Any]:
    folder = storage_path(upload.folder)
    files = {role: folder / name for role, name in upload.params.get("files", {}).items()}
    if upload.kind == Upload.Kind.KG:
        from pooling.engine.kgfiles import MetadataFiles
        from pooling.services.kg_import import import_kg

        kg = import_kg(upload.name, folder, files=MetadataFiles(), description=upload.params.get("description", ""),
                       progress=progress)
        return {"kg": kg}
    progress("import", 0, 1)
    description = upload.params.get("description", "")
    if upload.kind == Upload.Kind.SCORES:
        from pooling.services.rankings import import_scores

        system = import_scores(upload.sample, files["scores"], name=upload.name, description=description,
                               entity_index_path=files.get("entities"), questions_path=files.get("questions"),
                               k=upload.params.get("k"))
    elif upload.kind == Upload.Kind.RUN:
        from pooling.services.rankings import import_run

        system = import_run(upload.sample, files["run"], name=upload.name, description=description,
                            questions_path=files.get("questions"))
    else:
        from pooling.services.checkpoint_import import import_checkpoint

        system = import_checkpoint(upload.kg, files["checkpoint"], name=upload.name, description=description,
                                   model=upload.params.get("model") or None, options=upload.params.get("options"))
    progress("import", 1, 1)
    return {"system": system}


def _finish(upload: Upload, status: str, *, error: str = "", kg: KnowledgeGraph | None = None,
            system: System | None = None) -> None:
    values: dict[str, Any] = {"status": status, "error": error[:10000], "finished_at": timezone.now(),
                              "stage": "done" if status == Upload.Status.DONE else "failed"}
    if kg is not None:
        values["kg"] = kg
    if system is not None:
        values["system"] = system
    Upload.objects.filter(pk=upload.pk).update(**values)
    upload.refresh_from_db()
