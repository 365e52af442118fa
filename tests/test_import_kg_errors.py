"""Bad dataset files are refused with the file and line named, and nothing is written."""
from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pooling.models import Entity, KnowledgeGraph, Relation, Triple

GOOD = {
    "train.txt": "a\tr1\tb\nb\tr1\tc\nc\tr2\ta\n",
    "valid.txt": "a\tr2\tc\n",
    "test.txt": "b\tr2\ta\n",
}


def write_dataset(folder: Path, **overrides: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in {**GOOD, **overrides}.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / name).write_bytes(data)
    return folder


def database_is_empty() -> bool:
    return not any(model.objects.exists() for model in (KnowledgeGraph, Entity, Relation, Triple))


def import_error(folder: Path, *extra: str) -> str:
    with pytest.raises(CommandError) as raised:
        call_command("import_kg", "bad", str(folder), *extra, stdout=StringIO(), verbosity=0)
    return str(raised.value)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"train.txt": "a\tr1\tb\nb\tr1\n"}, "train.txt:2: expected 3 columns"),
        ({"valid.txt": "a r1 b extra\n"}, "valid.txt:1: expected 3 columns"),
        ({"test.txt": ""}, "test.txt: the split is empty"),
        ({"test.txt": "\n  \n"}, "test.txt: the split is empty"),
        ({"train.txt": b"a\tr1\tb\nb\tr1\tc\xe9\n"}, "train.txt:2: not valid UTF-8"),
        ({"valid.txt": b"a\tr1\tb\nb\tr1\tc\x00\n"}, "valid.txt:2: contains a NUL byte"),
        ({"entity_names.tsv": "a\tAlpha\nb\tBeta\na\tAlpha again\n"}, "entity_names.tsv:3: duplicate entry 'a' (first on line 1)"),
        ({"relation_types.tsv": "r1\t/x\n"}, "relation_types.tsv:1: expected at least 3"),
        ({"entity_wikidata.json": '{"a": {"label": "A"},'}, "entity_wikidata.json:1: invalid JSON"),
    ],
)
def test_bad_file_names_file_and_line_and_writes_nothing(tmp_path, overrides, expected):
    message = import_error(write_dataset(tmp_path / "ds", **overrides))
    assert expected in message
    assert "(nothing was imported)" in message and "\n" not in message
    assert database_is_empty()


@pytest.mark.django_db
def test_missing_split_file(tmp_path):
    folder = write_dataset(tmp_path / "ds")
    (folder / "valid.txt").unlink()
    assert "valid.txt: file not found" in import_error(folder)
    assert database_is_empty()


@pytest.mark.django_db
def test_unknown_entity_or_relation_with_vocabulary(tmp_path):
    folder = write_dataset(tmp_path / "ds")
    (tmp_path / "entities.txt").write_text("a\nb\n")  # c is missing
    message = import_error(folder, "--entity-vocab", str(tmp_path / "entities.txt"))
    assert "train.txt:2: unknown entity 'c'" in message
    (tmp_path / "relations.txt").write_text("r1\n")
    message = import_error(folder, "--relation-vocab", str(tmp_path / "relations.txt"))
    assert "train.txt:3: unknown relation 'r2'" in message
    assert database_is_empty()


@pytest.mark.django_db
def test_crlf_spaces_and_duplicates_tolerated(tmp_path):
    folder = write_dataset(tmp_path / "ds", **{"train.txt": "a r1 b\r\nb\tr1\tc\r\nc r2 a\r\na r1 b\r\n"})
    out = StringIO()
    call_command("import_kg", "ok", str(folder), stdout=out, verbosity=0)
    kg = KnowledgeGraph.objects.get(name="ok")
    assert (kg.num_entities, kg.num_relations, kg.num_train, kg.num_valid, kg.num_test) == (3, 2, 3, 1, 1)


@pytest.mark.django_db
def test_reimport_refused_unless_replace(tmp_path):
    folder = write_dataset(tmp_path / "ds")
    call_command("import_kg", "kg", str(folder), stdout=StringIO(), verbosity=0)
    with pytest.raises(CommandError, match="already exists .*--replace"):
        call_command("import_kg", "kg", str(folder), stdout=StringIO(), verbosity=0)
    assert Triple.objects.count() == 5

    write_dataset(folder, **{"test.txt": "b\tr2\ta\nc\tr1\ta\n"})
    call_command("import_kg", "kg", str(folder), "--replace", stdout=StringIO(), verbosity=0)
    kg = KnowledgeGraph.objects.get(name="kg")
    assert kg.num_test == 2
    assert Triple.objects.count() == 6
    assert KnowledgeGraph.objects.count() == 1


@pytest.mark.django_db
def test_failed_replace_keeps_the_old_graph(tmp_path):
    folder = write_dataset(tmp_path / "ds")
    call_command("import_kg", "kg", str(folder), stdout=StringIO(), verbosity=0)
    broken = write_dataset(tmp_path / "broken", **{"test.txt": "b\tr2\n"})
    with pytest.raises(CommandError, match="test.txt:1"):
        call_command("import_kg", "kg", str(broken), "--replace", stdout=StringIO(), verbosity=0)
    assert KnowledgeGraph.objects.get(name="kg").num_test == 1
    assert Triple.objects.count() == 5


@pytest.mark.django_db
def test_failure_during_write_rolls_everything_back(tmp_path, monkeypatch):
    import pooling.services.kg_import as kg_import

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kg_import, "save_arrays", disk_full)
    with pytest.raises(OSError):
        kg_import.import_kg("kg", write_dataset(tmp_path / "ds"))
    assert database_is_empty()


@pytest.mark.django_db
def test_replace_refused_while_the_graph_has_systems(tmp_path):
    from pooling.models import System

    folder = write_dataset(tmp_path / "ds")
    call_command("import_kg", "kg", str(folder), stdout=StringIO(), verbosity=0)
    System.objects.create(kg=KnowledgeGraph.objects.get(name="kg"), name="distmult", architecture="distmult")
    with pytest.raises(CommandError, match=r"'kg' is in use \(1 systems\)"):
        call_command("import_kg", "kg", str(folder), "--replace", stdout=StringIO(), verbosity=0)
    assert Triple.objects.count() == 5 and System.objects.count() == 1


@pytest.mark.django_db
def test_an_import_of_the_same_name_that_commits_first_gives_one_line(tmp_path, monkeypatch):
    """Two `import_kg NAME` (or `campaign apply`) started together: the one that wrote second stopped with an
    IntegrityError traceback (found from outside). Here the other command commits while this one reads its files."""
    from pooling.services import kg_import

    read = kg_import.read_kg

    def read_while_another_imports(*args, **kwargs):
        data = read(*args, **kwargs)
        KnowledgeGraph.objects.create(name="bad", source="the other command")
        return data

    monkeypatch.setattr(kg_import, "read_kg", read_while_another_imports)
    message = import_error(write_dataset(tmp_path / "kg"))
    assert message == "a knowledge graph named 'bad' was imported by another command while this one ran (use " \
                      "--replace to overwrite it) (nothing was imported)"
    assert list(KnowledgeGraph.objects.values_list("source", flat=True)) == ["the other command"]
    assert not Entity.objects.exists() and not Triple.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_replace_removes_the_replaced_graph_s_files(tmp_path, settings):
    """Found from outside: every `--replace` left the old KG's folder behind (7.2 MB for FB15k-237)."""
    settings.STORAGE_DIR = tmp_path / "storage"
    folder = write_dataset(tmp_path / "ds")
    call_command("import_kg", "kg", str(folder), stdout=StringIO(), verbosity=0)
    old = (settings.STORAGE_DIR / KnowledgeGraph.objects.get(name="kg").arrays_file).parent
    assert old.is_dir()
    call_command("import_kg", "kg", str(folder), "--replace", stdout=StringIO(), verbosity=0)
    new = (settings.STORAGE_DIR / KnowledgeGraph.objects.get(name="kg").arrays_file).parent
    assert new.is_dir() and new != old and not old.exists()
    assert sorted(p.name for p in (settings.STORAGE_DIR / "kg").iterdir()) == [new.name]
