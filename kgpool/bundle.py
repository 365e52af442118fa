"""Judged sets as bundles: one folder (or one ``.tar.gz`` of it) that loads anywhere. No Django here.

Written by ``python manage.py export_judgments CAMPAIGN --format bundle -o DIR|FILE.tar.gz``; read back into
kgpool by ``import_judgments --bundle``, into pandas by :func:`load`, into PyKEEN by :func:`pykeen_dataset` or
PyKEEN's own ``PathDataset`` (:data:`PYKEEN_PATHS`). Layout (every path relative to the bundle's folder)::

    dataset.json          what the set is: format, name, KG, sample, pool, campaign settings, counts, files
    README.md             the datasheet: pool systems and depth, judging, agreement, label origins, reusability
    checksums.sha256      sha256 of every other file (``sha256sum -c checksums.sha256`` checks them)
    kg/train.txt  kg/valid.txt  kg/test.txt     the KG's splits, ``h<TAB>r<TAB>t`` (keys), in the KG's order
    kg/entity_names.tsv   ``key<TAB>name``
    sample.txt            the sampled test triples (the sparse labels: all Y)
    pool.tsv              ``h r t depth systems``: every pooled candidate, its best rank, who retrieved it
    labels.tsv            the completed set: ``h r t Y|N`` (sampled triples + every finally labelled candidate)
    labels-origin.tsv     ``h r t Y|N origin`` (unanimous, adjudicated, rule:<rules>, audit, reused, imported, test)
    positives.tsv         ``h r t`` of the Y labels: PyKEEN's testing triples
    questions.tsv         ``qid entity relation``: the questions with a relevant answer (head<N>: (?, r, entity))
    qrels/final.txt       TREC qrels ``qid 0 entity rel`` of the final labels
    qrels/annotators/A<n>.txt   each (pseudonymous) annotator's own answers as qrels
    qrels/origins/<origin>.txt  the final qrels split by where each label came from
    judgments.jsonl       one record per pooled candidate: its judgments (annotator, answer, source, quote,
                          time), adjudication, flags, final label and origin (what ``import_judgments`` reads)
    reusability.json      leave-one-system-out figures (when ``pool_reusability`` was run)

Everything is text in UTF-8 with LF line endings, sorted, without dates of the export: exporting the same
campaign twice, or a campaign imported from a bundle, gives the same bytes.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

FORMAT = "kgpool-judged-set"
VERSION = 1
DATASET = "dataset.json"
CHECKSUMS = "checksums.sha256"
#: PyKEEN's ``PathDataset(training_path=..., testing_path=..., validation_path=...)`` on a bundle folder: the KG's
#: train and valid splits, the completed positives as the test set. PyKEEN keeps only the triples whose entities
#: and relations appear in training; :func:`pykeen_dataset` keeps every entity of the KG.
PYKEEN_PATHS = {"training_path": "kg/train.txt", "validation_path": "kg/valid.txt", "testing_path": "positives.tsv"}
MAX_MEMBER_BYTES = 4 << 30  # a member larger than this is refused (a bundle of FB15k-237 is about 30 MB)


class BundleError(ValueError):
    """A bundle that cannot be read (one line naming the bundle and the file)."""


def checksum_lines(files: dict[str, bytes]) -> bytes:
    """The ``checksums.sha256`` of ``files`` (every file but itself), sorted, in ``sha256sum``'s format."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                   for name, data in sorted(files.items()) if name != CHECKSUMS).encode()


def write_bundle(files: dict[str, bytes], path: Path | str) -> Path:
    """Write ``files`` (relative path -> bytes, ``checksums.sha256`` added) as a folder, or as a ``.tar.gz``
    (one top folder named after the file, no dates in the headers) when ``path`` ends so. Written to a
    temporary name and renamed, so a reader never sees half a bundle."""
    path = Path(path)
    files = {**files, CHECKSUMS: checksum_lines(files)}
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.part")
    if is_archive(path):
        import gzip

        top = archive_top(path)
        with open(temp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(_folders(files)):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                tar.addfile(info)
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
        os.replace(temp, path)
        return path
    if path.exists():
        raise BundleError(f"{path} exists; remove it or choose another folder")
    import shutil

    shutil.rmtree(temp, ignore_errors=True)
    try:
        for name, data in files.items():
            target = temp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.replace(temp, path)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return path


def _folders(files: dict[str, bytes]) -> set[str]:
    return {str(parent) for name in files for parent in PurePosixPath(name).parents if str(parent) != "."}


def is_archive(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz"))


def archive_top(path: Path) -> str:
    name = path.name
    return name[: -len(".tar.gz")] if name.endswith(".tar.gz") else name[: -len(".tgz")]


def read_files(path: Path | str, *, verify: bool = True) -> dict[str, bytes]:
    """Every file of the bundle at ``path`` (folder or .tar.gz), checked against ``checksums.sha256`` (a file
    missing, added or changed is refused). Archive members must be regular files and folders under one top
    folder, with relative paths that stay inside it."""
    path = Path(path)
    if is_archive(path):
        files = _archive_files(path)
    elif path.is_dir():
        files = {}
        for file in sorted(path.rglob("*")):
            if file.is_symlink() or (not file.is_file() and not file.is_dir()):
                raise BundleError(f"{path}: {file.relative_to(path)} is not a regular file")
            if file.is_file():
                files[file.relative_to(path).as_posix()] = file.read_bytes()
    else:
        raise BundleError(f"{path}: no such bundle (a folder, or a .tar.gz of one)")
    if DATASET not in files:
        raise BundleError(f"{path}: not a judged-set bundle (no {DATASET})")
    if verify:
        if CHECKSUMS not in files:
            raise BundleError(f"{path}: {CHECKSUMS} is missing")
        if checksum_lines(files) != files[CHECKSUMS]:
            listed = _listed(files[CHECKSUMS])
            actual = {n: hashlib.sha256(d).hexdigest() for n, d in files.items() if n != CHECKSUMS}
            bad = sorted(n for n in set(listed) | set(actual) if listed.get(n) != actual.get(n))
            raise BundleError(f"{path}: {bad[0] if bad else CHECKSUMS} differs from {CHECKSUMS}"
                              + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
    return files


def _listed(text: bytes) -> dict[str, str]:
    listed = {}
    for line in text.decode("utf-8", "replace").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    return listed


def _archive_files(path: Path) -> dict[str, bytes]:
    try:
        tar = tarfile.open(path, mode="r:gz")
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise BundleError(f"{path}: not a readable .tar.gz ({exc})") from None
    files: dict[str, bytes] = {}
    top = None
    with tar:
        try:
            for info in tar:
                parts = PurePosixPath(info.name).parts
                if not parts or info.name.startswith("/") or ".." in parts:
                    raise BundleError(f"{path}: member {info.name!r} lies outside the bundle")
                if top is None:
                    top = parts[0]
                if parts[0] != top:
                    raise BundleError(f"{path}: members lie in more than one top folder ({top}, {parts[0]})")
                if info.isdir():
                    continue
                if not info.isfile():
                    raise BundleError(f"{path}: member {info.name!r} is not a regular file")
                if info.size > MAX_MEMBER_BYTES:
                    raise BundleError(f"{path}: member {info.name!r} is {info.size} bytes, over the limit")
                if len(parts) > 1:
                    files["/".join(parts[1:])] = tar.extractfile(info).read()
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise BundleError(f"{path}: damaged archive ({exc})") from None
    return files


# ----------------------------------------------------------------------------------------------- loaders
def _tsv(data: bytes, columns: list[str]):
    import pandas as pd

    return pd.read_csv(io.BytesIO(data), sep="\t", header=None, names=columns, dtype=str, keep_default_na=False,
                       quoting=3)


def _qrels(data: bytes):
    import pandas as pd

    rows = [line.split() for line in data.decode("utf-8").splitlines() if line.strip()]
    frame = pd.DataFrame([(q, e, int(r)) for q, _zero, e, r in rows], columns=["qid", "entity", "rel"])
    return frame.astype({"qid": str, "entity": str, "rel": "int64"})


@dataclass
class Bundle:
    """A bundle read into pandas (:func:`load`)."""

    dataset: dict[str, Any]
    readme: str
    labels: Any  # DataFrame: head, relation, tail, label (Y/N), origin
    questions: Any  # qid, entity, relation
    qrels: Any  # qid, entity, rel
    annotator_qrels: Any  # annotator, qid, entity, rel
    pool: Any  # head, relation, tail, depth (Int64, NA unknown), systems (list of names)
    sample: Any  # head, relation, tail
    splits: dict[str, Any] = field(default_factory=dict)  # train / valid / test: head, relation, tail
    judgments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def positives(self):
        return self.labels[self.labels.label == "Y"][["head", "relation", "tail"]].reset_index(drop=True)


def load(path: Path | str, *, verify: bool = True) -> Bundle:
    """Read a bundle (folder or .tar.gz) into pandas DataFrames, checking its checksums."""
    import pandas as pd

    files = read_files(path, verify=verify)
    dataset = json.loads(files[DATASET])
    triple = ["head", "relation", "tail"]
    labels = _tsv(files["labels-origin.tsv"], [*triple, "label", "origin"])
    pool = _tsv(files["pool.tsv"], [*triple, "depth", "systems"])
    pool["depth"] = pd.to_numeric(pool["depth"].replace("-", None)).astype("Int64")
    pool["systems"] = pool["systems"].map(lambda s: [] if s in ("", "-") else s.split(","))
    annotators = []
    for name, data in sorted(files.items()):
        if name.startswith("qrels/annotators/"):
            frame = _qrels(data)
            frame.insert(0, "annotator", PurePosixPath(name).stem)
            annotators.append(frame)
    annotator_qrels = (pd.concat(annotators, ignore_index=True) if annotators else
                       pd.DataFrame(columns=["annotator", "qid", "entity", "rel"]))
    return Bundle(
        dataset=dataset, readme=files.get("README.md", b"").decode("utf-8"), labels=labels,
        questions=_tsv(files["questions.tsv"], ["qid", "entity", "relation"]), qrels=_qrels(files["qrels/final.txt"]),
        annotator_qrels=annotator_qrels, pool=pool, sample=_tsv(files["sample.txt"], triple),
        splits={split: _tsv(files[f"kg/{split}.txt"], triple) for split in ("train", "valid", "test")},
        judgments=[json.loads(line) for line in files.get("judgments.jsonl", b"").decode("utf-8").splitlines()],
    )


def pykeen_dataset(path: Path | str):
    """The bundle as a PyKEEN ``EagerDataset``: training / validation = the KG's train / valid splits, testing =
    the completed positives, over every entity and relation of the KG (``PathDataset`` on :data:`PYKEEN_PATHS`
    would drop triples whose entities occur only outside train)."""
    import numpy as np
    import torch
    from pykeen.datasets import EagerDataset
    from pykeen.triples import TriplesFactory

    bundle = load(path)
    entities = sorted({*bundle.splits["train"][["head", "tail"]].stack(), *bundle.splits["valid"][["head", "tail"]].stack(),
                       *bundle.splits["test"][["head", "tail"]].stack(), *bundle.labels[["head", "tail"]].stack()})
    relations = sorted({*bundle.splits["train"]["relation"], *bundle.splits["valid"]["relation"],
                        *bundle.splits["test"]["relation"], *bundle.labels["relation"]})
    entity_to_id = {key: i for i, key in enumerate(entities)}
    relation_to_id = {key: i for i, key in enumerate(relations)}

    def factory(frame) -> TriplesFactory:
        ids = np.array([[entity_to_id[h], relation_to_id[r], entity_to_id[t]]
                        for h, r, t in frame[["head", "relation", "tail"]].itertuples(index=False)],
                       dtype=np.int64).reshape(-1, 3)
        return TriplesFactory(mapped_triples=torch.as_tensor(ids), entity_to_id=entity_to_id,
                              relation_to_id=relation_to_id)

    return EagerDataset(training=factory(bundle.splits["train"]), testing=factory(bundle.positives),
                        validation=factory(bundle.splits["valid"]))

