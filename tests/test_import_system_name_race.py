"""Two imports of one system name at once (found from outside: three `import_scores ... --name sconc` started
together): the one that commits second says so in one line, as import_kg and import_pool do, instead of an
IntegrityError traceback; its files are removed."""
from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from pooling.models import Ranking, System
from pooling.services import rankings
from tests._pool_support import storage  # noqa: F401
from tests.test_import_hostile_inputs import NUM_ENTITIES, NUM_QUESTIONS, world  # noqa: F401

pytestmark = pytest.mark.django_db


def _another_command_commits_first(monkeypatch, kg_name: str = "fz") -> None:
    """Between this import's name check and its write, another command stores a system of that name."""
    real = rankings._new_system_name

    def checked_then_taken(kg, name, error):
        checked = real(kg, name, error)
        System.objects.create(kg=kg, name=checked, architecture="", origin=System.Origin.IMPORTED,
                              status=System.Status.READY, config={})
        return checked

    monkeypatch.setattr(rankings, "_new_system_name", checked_then_taken)


@pytest.mark.parametrize("command", ["import_run", "import_scores"])
def test_the_second_import_of_a_name_says_so(world, storage, monkeypatch, command):  # noqa: F811
    if command == "import_run":
        source = world / "good.run"
    else:
        source = world / "s.npy"
        np.save(source, np.random.default_rng(0).random((NUM_QUESTIONS, NUM_ENTITIES)))
    _another_command_commits_first(monkeypatch)
    before = sorted(p.relative_to(storage) for p in storage.rglob("*") if p.is_file())
    with pytest.raises(CommandError) as refused:
        call_command(command, "fz", "all", str(source), "--name", "race", stdout=io.StringIO())
    assert str(refused.value) == ("a system named 'race' was imported into fz by another command while this one ran "
                                  "(nothing was imported)")
    assert System.objects.filter(name="race").count() == 1 and not Ranking.objects.filter(system__name="race").exists()
    assert sorted(p.relative_to(storage) for p in storage.rglob("*") if p.is_file()) == before
