"""Property-based: random and truncated dataset files give a KGFormatError or a consistent import, never a
traceback of another kind, and a refused import writes nothing."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pooling.engine.kgfiles import KGFormatError, read_kg

GOOD = {"train.txt": b"a\tr\tb\nb\tr\tc\n", "valid.txt": b"c\tr\ta\n", "test.txt": b"a\tr\tc\n"}
FILES = ["train.txt", "valid.txt", "test.txt", "entity_names.tsv", "relation_types.tsv", "entity_wikidata.json"]
# Text that looks like dataset lines: ids, tabs, spaces, newlines, CRs and a few odd characters.
line_text = st.text(alphabet=st.sampled_from(list("abc r\t\n\r{}\":,é\x00") + ["\ufeff"]), max_size=80)


def dataset(files: dict[str, bytes]) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="kgfuzz-"))
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def check_read(folder: Path) -> None:
    try:
        data = read_kg(folder)
    except KGFormatError as error:
        assert str(error).startswith(str(folder)) or "file not found" in str(error)
        return
    # A successful read is internally consistent.
    for split, triples in data.splits.items():
        assert triples.shape[1] == 3 and len(triples) > 0
        assert triples[:, [0, 2]].max() < len(data.entity_keys)
        assert triples[:, 1].max() < len(data.relation_keys)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FILES), content=st.one_of(st.binary(max_size=120), line_text.map(str.encode)))
# the hostile files of issue #13: keys longer than the columns, nested JSON, NUL / surrogate escapes, long lines
@example(name="train.txt", content=b"a\tr\t" + b"k" * 300 + b"\n")
@example(name="valid.txt", content=b"a\t" + b"r" * 501 + b"\tb\n")
@example(name="relation_types.tsv", content=b"r\t" + b"t" * 256 + b"\tx\n")
@example(name="entity_wikidata.json", content=b"[" * 100_000)
@example(name="entity_wikidata.json", content=b'{"a": {"label": "x\\u0000"}}')
@example(name="entity_wikidata.json", content=b'{"a": {"label": "\\udc00"}}')
@example(name="test.txt", content=b"a r c\n" + b"x" * (2 << 20))
def test_random_file_content(name, content):
    folder = dataset({**GOOD, name: content})
    try:
        check_read(folder)
    finally:
        shutil.rmtree(folder)


@settings(max_examples=100, deadline=None)
@given(cut=st.floats(min_value=0, max_value=1), name=st.sampled_from(["train.txt", "entity_names.tsv", "relation_types.tsv"]))
def test_truncated_real_files(shared_data, cut, name):
    source = shared_data / "umls" if name != "relation_types.tsv" else shared_data / "fb15k-237"
    content = (source / name).read_bytes()[:200_000]
    files = {split: (shared_data / "umls" / split).read_bytes() for split in ("train.txt", "valid.txt", "test.txt")}
    files[name] = content[: int(len(content) * cut)]
    folder = dataset(files)
    try:
        check_read(folder)
    finally:
        shutil.rmtree(folder)


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=line_text)
@example(content="a\tr\t" + "k" * 300 + "\n")  # longer than Entity.key: a DataError on PostgreSQL before #13
def test_refused_import_writes_nothing(content):
    from pooling.models import Entity, KnowledgeGraph, Triple
    from pooling.services.kg_import import import_kg

    def state() -> tuple:
        return (list(KnowledgeGraph.objects.values_list("name", "num_train", "arrays_file")),
                Entity.objects.count(), Triple.objects.count())

    # Examples share one test transaction: an earlier accepted example may already have stored "fuzz", and a
    # refused replace must leave exactly that in place.
    before = state()
    folder = dataset({**GOOD, "train.txt": content.encode()})
    try:
        try:
            import_kg("fuzz", folder, replace=True)
        except KGFormatError:
            assert state() == before
        else:
            assert KnowledgeGraph.objects.get(name="fuzz").num_train == Triple.objects.filter(split="train").count()
    finally:
        shutil.rmtree(folder)
