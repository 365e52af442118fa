"""Hostile inputs of issue #13 (an outside review fed them to every importer): each is refused with one line
that names the file (or the option), before any large allocation, without hanging, and nothing is written.

One parametrized list per importer; every case runs the management command in-process (``call_command``) and
checks: CommandError (exit status 1 on the command line, 130 for Ctrl-C, see test_import_interrupt.py), a
single line, the file and the expected reason in it, the database rows and the storage folder unchanged, and a
bounded peak of Python/numpy allocations (tracemalloc). FIFOs are opened by the importers without blocking; a
SIGALRM guard turns a regression into a failure instead of a hung suite.
"""
from __future__ import annotations

import io
import os
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._annotation_support import star_campaign, write_kg
from tests._hostile_support import dev_zero, directory, fifo, no_hang  # noqa: F401  (no_hang: autouse fixture)
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db

TRAIN = [("e0", "r", "e1"), ("e1", "r", "e2"), ("e2", "s", "e3"), ("e3", "r", "e4"), ("e4", "s", "e5"),
         ("e5", "r", "e6"), ("e6", "s", "e7"), ("e7", "r", "e0")]
VALID = [("e0", "s", "e2")]
TEST = [("e1", "r", "e3"), ("e2", "r", "e5"), ("e4", "s", "e6")]
GOOD_RUN = "".join(f"{q} Q0 {e} {rank} {10 - rank}.5 ext\n" for q in ("head0", "tail1", "head2")
                   for rank, e in enumerate(("e0", "e1", "e2"), start=1))
NUM_QUESTIONS, NUM_ENTITIES = 6, 8  # of sample "all" (every test triple) and of the KG
PEAK_LIMIT = 256 << 20  # bytes: every refusal below happens long before anything of the declared size


@pytest.fixture
def world(tmp_path, storage):
    """KG fz (8 entities), sample `all` (3 test triples, 6 questions), imported system `ext`, campaign star."""
    from pooling.models import Sample
    from pooling.services.kg_import import import_kg
    from pooling.services.rankings import import_run
    from pooling.services.samples import create_sample

    kg = import_kg("fz", write_kg(tmp_path / "fz", TRAIN, VALID, TEST))
    sample = create_sample(kg, name="all", method=Sample.Method.FILE, seed=None, indices=[0, 1, 2])
    good = tmp_path / "good.run"
    good.write_text(GOOD_RUN)
    import_run(sample, good, name="ext")
    star_campaign(tmp_path / "star", items=2)
    return tmp_path


def _state(storage_dir: Path) -> tuple:
    from annotation.models import Item
    from pooling.models import (
        Entity, KnowledgeGraph, Pool, PoolEntry, PoolHit, Question, Ranking, Relation, Sample, SampleTriple,
        System, Triple,
    )

    counts = tuple(model.objects.count() for model in (KnowledgeGraph, Entity, Relation, Triple, Sample,
                                                         SampleTriple, Question, System, Ranking, Pool, PoolEntry,
                                                         PoolHit))
    items = list(Item.objects.order_by("pk").values_list("pk", "status", "label", "label_origin"))
    files = sorted(str(p.relative_to(storage_dir)) for p in storage_dir.rglob("*")) if storage_dir.exists() else []
    return counts, items, files


def assert_refused(storage_dir: Path, args: list[str], named: str, reason: str) -> str:
    """Run the command; it must refuse in one line naming ``named`` with ``reason``, writing nothing, small peak."""
    before = _state(storage_dir)
    tracemalloc.start()
    try:
        with pytest.raises(CommandError) as raised:
            call_command(*args, stdout=io.StringIO(), stderr=io.StringIO(), verbosity=0)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(raised.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert named in message, (named, message)
    assert reason in message, (reason, message)
    assert raised.value.returncode != 0
    assert peak < PEAK_LIMIT, f"peak allocation {peak / 2**20:.0f} MiB for {args}"
    assert _state(storage_dir) == before
    return message


# ------------------------------------------------------------------------------------ hostile files
def text(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def npy_header_only(path: Path, shape: tuple[int, ...], descr: str = "<f8", payload: bytes = b"") -> Path:
    """A .npy whose header declares ``shape`` followed by only ``payload`` bytes (np.load would allocate first)."""
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": descr, "fortran_order": False, "shape": shape})
    path.write_bytes(stream.getvalue() + payload)
    return path


def sparse(path: Path, data_bytes: int) -> Path:
    """Extend the file by ``data_bytes`` zero bytes without writing them (a hole: no disk space used)."""
    os.truncate(path, path.stat().st_size + data_bytes)
    return path


def npz(path: Path, members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def npy_bytes(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=True)
    return stream.getvalue()


def forged_bomb(path: Path) -> Path:
    """An npz whose `scores.npy` member claims 4 GB uncompressed from a few hundred compressed bytes."""
    npz(path, {"scores.npy": npy_bytes(np.zeros((NUM_QUESTIONS, NUM_ENTITIES)))}, zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    for signature, size_offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header, central directory
        start = data.index(signature)
        struct.pack_into("<I", data, start + size_offset, 4_000_000_000)
    path.write_bytes(bytes(data))
    return path


def dataset(tmp: Path, **files) -> Path:
    folder = write_kg(tmp / "ds", TRAIN, VALID, TEST)
    for name, build in files.items():
        target = folder / name.replace("__", ".")
        target.unlink(missing_ok=True)
        build(target)
    return folder


KEY_300 = "k" * 300
DEEP_JSON = "[" * 100_000
IMPORT_KG = {
    # name: (dataset files {file name with . as __: builder}, extra args, file named, reason)
    "entity-key-300": ({"train__txt": lambda p: text(p, f"e0\tr\t{KEY_300}\n")}, [], "train.txt:1", "at most 255"),
    "relation-key-600": ({"valid__txt": lambda p: text(p, f"e0\t{'r' * 600}\te1\n")}, [], "valid.txt:1",
                         "at most 500"),
    "nested-json": ({"entity_wikidata__json": lambda p: text(p, DEEP_JSON)}, [], "entity_wikidata.json",
                    "nested too deeply"),
    "nested-json-object": ({"entity2types__json": lambda p: text(p, '{"e0": ' + DEEP_JSON)}, [], "entity2types.json",
                           "nested too deeply"),
    "json-nul": ({"entity_wikidata__json": lambda p: text(p, '{"e0": {"label": "a\\u0000b"}}')}, [],
                 "entity_wikidata.json", "NUL"),
    "json-surrogate": ({"entity_wikidata__json": lambda p: text(p, '{"e0": {"description": "\\ud800"}}')}, [],
                       "entity_wikidata.json", "surrogate"),
    "type-300": ({"relation_types__tsv": lambda p: text(p, f"r\t{'t' * 300}\tx\n")}, [], "relation_types.tsv:1",
                 "at most 255"),
    "dev-zero-valid": ({"valid__txt": dev_zero}, [], "valid.txt", "character device"),
    "fifo-valid": ({"valid__txt": fifo}, [], "valid.txt", "FIFO"),
    "directory-train": ({"train__txt": directory}, [], "train.txt", "directory"),
    "fifo-metadata": ({"entity_names__tsv": fifo}, [], "entity_names.tsv", "FIFO"),
    "long-line": ({"test__txt": lambda p: text(p, "e1\tr\te3\n" + "x" * (2 << 20))}, [], "test.txt:2",
                  "longer than"),
}


@pytest.mark.parametrize("case", IMPORT_KG)
def test_import_kg_refuses(world, storage, case):
    files, extra, named, reason = IMPORT_KG[case]
    folder = dataset(world / case, **files)
    assert_refused(storage, ["import_kg", "new", str(folder), *extra], named, reason)


@pytest.mark.parametrize("name, reason", [("../../x y", "must be a slug"), ("a/b", "must be a slug"),
                                          ("_x", "must be a slug"), ("x" * 101, "at most 100")])
def test_import_kg_refuses_names(world, storage, name, reason):
    assert_refused(storage, ["import_kg", name, str(dataset(world))], "knowledge graph name", reason)


def test_import_kg_refuses_a_long_vocabulary_key_and_an_oversized_json(world, storage, monkeypatch):
    from pooling.engine import userfiles

    vocab = text(world / "vocab.txt", "e0\n" + KEY_300 + "\n")
    assert_refused(storage, ["import_kg", "new", str(dataset(world)), "--entity-vocab", str(vocab)],
                   "vocab.txt:2", "at most 255")
    monkeypatch.setattr(userfiles, "MAX_JSON_BYTES", 100)
    big = text(world / "types.json", '{"t": "' + "x" * 200 + '"}')
    assert_refused(storage, ["import_kg", "new", str(dataset(world)), "--type-labels", str(big)],
                   "types.json", "more than the 100 allowed")


def _run_file(tmp: Path, build) -> Path:
    return build(tmp / "x.run")


IMPORT_RUN = {
    "doc-id-30mb": (lambda p: text(p, GOOD_RUN + "head0 Q0 " + "d" * (30 << 20) + " 4 1.0 ext\n"), "x.run:10",
                    "longer than"),
    "doc-id-1m-chars": (lambda p: text(p, "".join(f"head0 Q0 d{i} 1 1.0 ext\n" for i in range(300))
                                         + "head0 Q0 " + "d" * 1_000_000 + " 4 1.0 ext\n"), "x.run:301",
                        "a field of 1,000,000 characters"),
    "qid-300": (lambda p: text(p, f"{'q' * 300} Q0 e0 1 1.0 ext\n"), "x.run:1", "at most 255"),
    "plus-inf": (lambda p: text(p, GOOD_RUN.replace("head2 Q0 e1 2 8.5", "head2 Q0 e1 2 inf")), "x.run:8",
                 "+inf"),
    "nan": (lambda p: text(p, GOOD_RUN.replace("tail1 Q0 e0 1 9.5", "tail1 Q0 e0 1 nan")), "x.run:4", "NaN"),
    "all-minus-inf": (lambda p: text(p, "head0 Q0 e0 1 -inf ext\nhead0 Q0 e1 2 -inf ext\n"), "x.run",
                      "every line of the run scores -inf"),
    "fifo": (fifo, "x.run", "FIFO"),
    "dev-zero": (dev_zero, "x.run", "character device"),
    "directory": (directory, "x.run", "directory"),
}


@pytest.mark.parametrize("case", IMPORT_RUN)
def test_import_run_refuses(world, storage, case):
    build, named, reason = IMPORT_RUN[case]
    (world / case).mkdir()
    path = build(world / case / "x.run")
    assert_refused(storage, ["import_run", "fz", "all", str(path), "--name", "new"], named, reason)


@pytest.mark.parametrize("command", ["import_run", "import_scores"])
@pytest.mark.parametrize("name, reason", [("../../x y", "must be a slug"), ("x" * 101, "at most 100")])
def test_imported_system_names(world, storage, command, name, reason):
    path = text(world / "ok.run", GOOD_RUN) if command == "import_run" else world / "ok.npy"
    np.save(world / "ok.npy", np.ones((NUM_QUESTIONS, NUM_ENTITIES)))
    assert_refused(storage, [command, "fz", "all", str(path), "--name", name], "system name", reason)


def _scores(tmp: Path, build) -> Path:
    return build(tmp)


IMPORT_SCORES = {
    # the review's npz: a header declaring (1e6, 4000) float64 = 29.8 GiB; with the data there (a sparse file:
    # no disk used) the shape is refused, without it the truncation, both before np.load would allocate
    "npy-29.8GiB": (lambda d: sparse(npy_header_only(d / "big.npy", (1_000_000, 4000)), 32_000_000_000), [],
                    "big.npy", "4000 columns but fz has 8 entities"),
    "npy-29.8GiB-header-only": (lambda d: npy_header_only(d / "big.npy", (1_000_000, 4000)), [], "big.npy",
                                "truncated: the header declares shape (1000000, 4000)"),
    "npz-29.8GiB-header-only": (lambda d: npz(d / "big.npz", {"scores.npy": npy_header_only(
                                    d / "m.npy", (1_000_000, 4000)).read_bytes()}), [], "big.npz",
                                "`scores` is truncated"),
    "rows-huge": (lambda d: sparse(npy_header_only(d / "rows.npy", (10**9, NUM_ENTITIES)), 8 * 10**9 * 8), [],
                  "rows.npy", "1000000000 rows but sample all has 6 questions"),
    "truncated": (lambda d: npy_header_only(d / "cut.npy", (NUM_QUESTIONS, NUM_ENTITIES), payload=b"\0" * 8), [],
                  "cut.npy", "truncated"),
    "object-array": (lambda d: npz(d / "obj.npz", {"scores.npy": npy_bytes(np.ones((6, 8))),
                                                   "entities.npy": npy_bytes(np.array(["e0"] * 8, dtype=object))}),
                     [], "obj.npz", "pickled"),
    "zip-bomb": (lambda d: forged_bomb(d / "bomb.npz"), [], "bomb.npz", "zip bomb"),
    "long-entity-strings": (lambda d: npz(d / "wide.npz", {"scores.npy": npy_bytes(np.ones((6, 8))),
                                                           "entities.npy": npy_bytes(np.array(["x" * 300] * 8))}),
                            [], "wide.npz", "strings of up to 300 characters"),
    "entity-strings-header-only": (lambda d: npz(d / "wide.npz", {"scores.npy": npy_bytes(np.ones((6, 8))),
                                                                  "entities.npy": npy_header_only(
                                                                      d / "e.npy", (8,), "<U1000000").read_bytes()}),
                                   [], "wide.npz", "`entities` is truncated"),
    "plus-inf": (lambda d: _save(d / "inf.npy", _with(np.ones((6, 8)), (2, 3), np.inf)), [], "inf.npy", "+inf"),
    "all-nan": (lambda d: _save(d / "nan.npy", np.full((6, 8), np.nan)), [], "nan.npy",
                "none of the 6 rows holds a finite score"),
    "all-minus-inf": (lambda d: _save(d / "ninf.npy", np.full((6, 8), -np.inf)), [], "ninf.npy",
                      "none of the 6 rows"),
    "fifo": (lambda d: fifo(d / "s.npy"), [], "s.npy", "FIFO"),
    "dev-zero": (lambda d: dev_zero(d / "s.npy"), [], "s.npy", "character device"),
    "directory": (lambda d: directory(d / "s.npy"), [], "s.npy", "directory"),
    "fifo-entity-index": (lambda d: _save(d / "ok.npy", np.ones((6, 8))), ["--entities", "FIFO"], "idx", "FIFO"),
    "k-99999999999": (lambda d: _save(d / "ok.npy", np.ones((6, 8))), ["--k", "99999999999"], "--k",
                      "out of range"),
    "k-superscript": (lambda d: _save(d / "ok.npy", np.ones((6, 8))), ["--k", "²"], "--k", "not an integer"),
}


def _save(path: Path, array: np.ndarray) -> Path:
    np.save(path, array)
    return path


def _with(array: np.ndarray, where: tuple[int, int], value: float) -> np.ndarray:
    array[where] = value
    return array


@pytest.mark.parametrize("case", IMPORT_SCORES)
def test_import_scores_refuses(world, storage, case):
    build, extra, named, reason = IMPORT_SCORES[case]
    folder = world / case
    folder.mkdir()
    path = build(folder)
    if "FIFO" in extra:
        extra = [fifo(folder / "idx") if arg == "FIFO" else arg for arg in extra]
    assert_refused(storage, ["import_scores", "fz", "all", str(path), "--name", "new", *map(str, extra)], named,
                   reason)


def _pool_files(tmp: Path, pool: str | None = None, sample: str | None = None, pool_build=None, sample_build=None):
    pool_path = pool_build(tmp / "p.tsv") if pool_build else text(tmp / "p.tsv", pool or "e1\tr\te5\t1\tsys-a\n")
    sample_path = sample_build(tmp / "s.txt") if sample_build else text(tmp / "s.txt", sample or "0\n1\n2\n")
    return pool_path, sample_path


IMPORT_POOL = {
    # name: (pool content | builder, sample content | builder, extra args, named, reason)
    "depth-superscript": ("e1\tr\te5\t²\tsys-a\n", None, [], "p.tsv:1", "depth '²' is not a positive integer"),
    "depth-superscript-4-fields": ("e1\tr\te5\t²\n", None, [], "p.tsv:1", "must be a slug"),
    "depth-20-digits": ("e1\tr\te5\t99999999999999999999\tsys-a\n", None, [], "p.tsv:1",
                        "is not between 1 and the 8 entities"),
    "depth-above-entities": ("e1\tr\te5\t9\n", None, [], "p.tsv:1", "is not between 1 and the 8 entities"),
    "system-name-101": (f"e1\tr\te5\t1\t{'s' * 101}\n", None, [], "p.tsv:1", "at most 100"),
    "system-name-path": ("e1\tr\te5\t1\t../x\n", None, [], "p.tsv:1", "must be a slug"),
    "sample-name-path": (None, None, ["--sample-name", "../../x y"], "sample name", "must be a slug"),
    "pool-name-path": (None, None, ["--name", "../x"], "pool name", "must be a slug"),
    "option-depth-huge": (None, None, ["--depth", "99999999999999999999"], "--depth", "out of range"),
    "option-depth-above-entities": (None, None, ["--depth", "9"], "depth", "between 1 and the 8 entities"),
    "sample-index-arabic-digit": (None, "\u0663\n", [], "s.txt:1", "not an integer test index"),
    "sample-index-30-digits": (None, "9" * 30 + "\n", [], "s.txt:1", "is outside 0..2"),
    "fifo-pool": (fifo, None, [], "p.tsv", "FIFO"),
    "dev-zero-sample": (None, dev_zero, [], "s.txt", "character device"),
    "directory-pool": (directory, None, [], "p.tsv", "directory"),
    "long-line": ("e1\tr\te5\n" + "x" * (2 << 20), None, [], "p.tsv:2", "longer than"),
}


@pytest.mark.parametrize("case", IMPORT_POOL)
def test_import_pool_refuses(world, storage, case):
    pool, sample, extra, named, reason = IMPORT_POOL[case]
    folder = world / case
    folder.mkdir()
    pool_path, sample_path = _pool_files(folder, pool if isinstance(pool, str) else None,
                                         sample if isinstance(sample, str) else None,
                                         pool if callable(pool) else None, sample if callable(sample) else None)
    assert_refused(storage, ["import_pool", "fz", str(pool_path), "--sample", str(sample_path), *extra], named,
                   reason)


SAMPLE_TEST = {
    "seed-1e26": (["--size", "2", "--seed", str(10**26)], "--seed", "out of range"),
    "seed-negative": (["--size", "2", "--seed", "-1"], "--seed", "out of range"),
    "size-huge": (["--size", "9" * 30], "--size", "out of range"),
    "size-above-test": (["--size", "4"], "fz", "cannot sample 4 of the 3"),
    "name-path": (["--size", "2", "--name", "../../x y"], "sample name", "must be a slug"),
    "name-101": (["--size", "2", "--name", "x" * 101], "sample name", "at most 100"),
    "fifo-file": (["--from-file", "FIFO"], "sample.txt", "FIFO"),
    "dev-zero-file": (["--from-file", "ZERO"], "zero.txt", "character device"),
}


@pytest.mark.parametrize("case", SAMPLE_TEST)
def test_sample_test_refuses(world, storage, case):
    args, named, reason = SAMPLE_TEST[case]
    folder = world / case
    folder.mkdir()
    replace = {"FIFO": lambda: str(fifo(folder / "sample.txt")), "ZERO": lambda: str(dev_zero(folder / "zero.txt"))}
    args = [replace[arg]() if arg in replace else arg for arg in args]
    assert_refused(storage, ["sample_test", "fz", *args], named, reason)


BUILD_POOL = {
    "depth-huge": (["--depth", "99999999999"], "--depth", "out of range"),
    "depth-above-entities": (["--depth", "9"], "depth", "between 1 and the 8 entities"),
    "chunk-size-huge": (["--chunk-size", "1" + "0" * 20], "--chunk-size", "out of range"),
    "timeout-nan": (["--timeout", "nan"], "--timeout", "positive, finite"),
    "name-path": (["--depth", "3", "--name", "../x"], "pool name", "must be a slug"),
}


@pytest.mark.parametrize("case", BUILD_POOL)
def test_build_pool_refuses(world, storage, case):
    args, named, reason = BUILD_POOL[case]
    assert_refused(storage, ["build_pool", "fz/all", "--systems", "ext", *args], named, reason)


IMPORT_JUDGMENTS = {
    "fifo": (fifo, "labels.tsv", "FIFO"),
    "dev-zero": (dev_zero, "labels.tsv", "character device"),
    "directory": (directory, "labels.tsv", "directory"),
    "long-line": (lambda p: text(p, "e0\tlikes\te2\tY\n" + "x" * (2 << 20)), "labels.tsv:2", "longer than"),
    "not-utf8": (lambda p: text(p, b"e0\tlikes\te2\tY\n\xff\n"), "labels.tsv:2", "not valid UTF-8"),
}


@pytest.mark.parametrize("case", IMPORT_JUDGMENTS)
def test_import_judgments_refuses(world, storage, case):
    build, named, reason = IMPORT_JUDGMENTS[case]
    (world / case).mkdir()
    assert_refused(storage, ["import_judgments", "star", str(build(world / case / "labels.tsv"))], named, reason)


@pytest.mark.parametrize("build, reason", [(fifo, "FIFO"), (dev_zero, "character device")])
def test_evaluate_labels_file_refused(world, build, reason):
    """`evaluate --labels FILE` reads judgments through the same checks."""
    from evaluation.services.labels import JudgmentsFile, LabelError
    from pooling.models import KnowledgeGraph

    path = build(world / "labels.tsv")
    with pytest.raises(LabelError, match=reason) as raised:
        JudgmentsFile(path).judged_triples(KnowledgeGraph.objects.get(name="fz"))
    assert str(raised.value).startswith(str(path))


@pytest.mark.parametrize("args, option", [(["sample_test", "fz", "--size", "2", "--seed", str(10**26)], "--seed"),
                                          (["import_scores", "fz", "all", "s.npy", "--name", "x", "--k",
                                            "99999999999"], "--k"),
                                          (["import_pool", "fz", "p.tsv", "--sample", "s.txt", "--depth", "²"],
                                           "--depth")])
def test_option_errors_on_the_command_line(tmp_path, args, option):
    """On the command line a bad option is argparse's usage line and one error line, exit status 2."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["KGPOOL_VAR_DIR"] = str(tmp_path / "var")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"manage.py {args[0]}: error: argument {option}: "), done.stderr
