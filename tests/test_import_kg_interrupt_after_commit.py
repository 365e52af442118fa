"""Ctrl-C that lands after import_kg's COMMIT (SQLite switching its checks back on, the replaced KG's folder being
removed): the import is done, so its arrays stay with its rows and the replaced folder goes. Before, the arrays
file of the committed KG was deleted and the command said "nothing was written"; every later command on the KG
then failed with FileNotFoundError (found from outside, with a real SIGINT 10.4 s into a --replace import)."""
from __future__ import annotations

import contextlib

import pytest
from django.db import connection

from pooling.models import KnowledgeGraph
from pooling.services import kg_import
from pooling.storage import load_arrays, storage_path
from tests._annotation_support import write_kg
from tests._pool_support import storage  # noqa: F401
from tests.test_import_hostile_inputs import TEST, TRAIN, VALID

pytestmark = pytest.mark.django_db(transaction=True)  # real COMMITs: the case is what happens after one


def _two_versions(tmp_path):
    first = kg_import.import_kg("kg", write_kg(tmp_path / "v1", TRAIN, VALID, TEST))
    return first, storage_path(first.arrays_file).parent, write_kg(tmp_path / "v2", TRAIN[:-1], VALID, TEST)


def _check_replaced(old_folder, returned):
    kg = KnowledgeGraph.objects.get(name="kg")
    assert kg.pk == returned.pk and storage_path(kg.arrays_file).is_file()  # the committed KG keeps its arrays
    assert kg.num_train == len(TRAIN) - 1
    assert not old_folder.exists()  # the replaced KG's folder is removed all the same
    assert load_arrays(kg.arrays_file)["train"].shape == (len(TRAIN) - 1, 3)


def test_an_interrupt_as_the_checks_come_back_on(tmp_path, storage, monkeypatch):  # noqa: F811
    first, old_folder, second = _two_versions(tmp_path)

    @contextlib.contextmanager
    def checks_then_interrupt():
        yield
        raise KeyboardInterrupt  # after the transaction inside committed

    monkeypatch.setattr(connection, "constraint_checks_disabled", checks_then_interrupt)
    _check_replaced(old_folder, kg_import.import_kg("kg", second, replace=True))


def test_an_interrupt_while_the_replaced_folder_is_removed(tmp_path, storage, monkeypatch):  # noqa: F811
    first, old_folder, second = _two_versions(tmp_path)
    real = kg_import.shutil.rmtree
    calls = []

    def interrupted(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise KeyboardInterrupt  # the on_commit clean-up, right after the COMMIT
        return real(path, *args, **kwargs)

    monkeypatch.setattr(kg_import.shutil, "rmtree", interrupted)
    _check_replaced(old_folder, kg_import.import_kg("kg", second, replace=True))
    assert calls == [old_folder, old_folder]


def test_an_interrupt_before_the_commit_still_writes_nothing(tmp_path, storage, monkeypatch):  # noqa: F811
    first, old_folder, second = _two_versions(tmp_path)
    real = kg_import.save_arrays

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(kg_import, "save_arrays", interrupted)
    with pytest.raises(KeyboardInterrupt):
        kg_import.import_kg("kg", second, replace=True)
    kept = KnowledgeGraph.objects.get(name="kg")
    assert kept.pk == first.pk and storage_path(kept.arrays_file).is_file() and old_folder.exists()
    assert sorted(p.name for p in old_folder.parent.iterdir()) == [old_folder.name]  # the new one's file went


def test_files_stay_when_the_database_cannot_say(tmp_path, storage, monkeypatch):  # noqa: F811
    """An interrupt that also broke the connection: whether the rows were committed is unknown, so the file is
    kept (an orphaned file is harmless, a KG row whose arrays were deleted is not)."""
    real = kg_import.save_arrays

    class Unreachable:
        def filter(self, **kwargs):
            raise RuntimeError("connection lost")

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        monkeypatch.setattr(kg_import.KnowledgeGraph, "objects", Unreachable())  # from here on: no answer
        raise KeyboardInterrupt

    monkeypatch.setattr(kg_import, "save_arrays", interrupted)
    with pytest.raises(KeyboardInterrupt):
        kg_import.import_kg("kg", write_kg(tmp_path / "v", TRAIN, VALID, TEST))
    monkeypatch.undo()
    assert [p.name for p in storage.rglob("*.npz")] == ["triples.npz"]  # kept, not removed
    assert not KnowledgeGraph.objects.exists()  # the rows were rolled back all the same
