"""import_kg says what it did to the files that their user should know (found from outside: both were silent):
repeated triples of a split are left out (later lines; a test index is a place among distinct triples), and
valid / test triples that train states too are kept but named (a trained model has seen their answer)."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from pooling.services.kg_import import import_kg
from tests._annotation_support import write_kg
from tests._pool_support import storage  # noqa: F401
from tests.test_import_hostile_inputs import TEST, TRAIN, VALID

pytestmark = pytest.mark.django_db


def test_repeats_and_leaks_are_noted(tmp_path, storage):  # noqa: F811
    folder = write_kg(tmp_path / "kg", TRAIN + TRAIN[:3] + [TRAIN[0]], VALID + [TRAIN[5]], TEST + TRAIN[1:3])
    notes: list[str] = []
    kg = import_kg("kg", folder, notes=notes)
    assert (kg.num_train, kg.num_valid, kg.num_test) == (len(TRAIN), 2, len(TEST) + 2)
    assert notes == ["train: 4 repeated triples left out (each is kept at its first line)",
                     "valid: 1 triple also in train (kept: a model trained on train has seen their answer)",
                     "test: 2 triples also in train (kept: a model trained on train has seen their answer)"]
    out = io.StringIO()
    call_command("import_kg", "again", str(folder), stdout=out)
    assert out.getvalue().splitlines()[-3:] == [f"note: {note}" for note in notes]


def test_clean_files_get_no_note(tmp_path, storage):  # noqa: F811
    notes: list[str] = []
    import_kg("kg", write_kg(tmp_path / "kg", TRAIN, VALID, TEST), notes=notes)
    assert notes == []
