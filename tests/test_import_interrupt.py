"""Ctrl-C in an importer: one line "interrupted, nothing was written", exit status 130, no traceback, and
really nothing written (rows rolled back, the arrays file of the rolled-back rows removed)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests._annotation_support import star_campaign, write_kg
from tests._pool_support import storage  # noqa: F401
from tests.test_import_hostile_inputs import GOOD_RUN, TEST, TRAIN, VALID, _state

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, storage):
    from pooling.models import Sample
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import create_sample

    kg = import_kg("fz", write_kg(tmp_path / "fz", TRAIN, VALID, TEST))
    create_sample(kg, name="all", method=Sample.Method.FILE, seed=None, indices=[0, 1, 2])
    star_campaign(tmp_path / "star", items=2)
    (tmp_path / "good.run").write_text(GOOD_RUN)
    (tmp_path / "pool.tsv").write_text("e1\tr\te5\t1\tsys-a\n")
    (tmp_path / "sample.txt").write_text("0\n1\n")
    from annotation.models import Item

    items = Item.objects.filter(campaign__name="star").values_list("head__key", "relation__key", "tail__key")
    (tmp_path / "labels.tsv").write_text("".join(f"{h}\t{r}\t{t}\tY\n" for h, r, t in items))
    return tmp_path


def _interrupt_after(module, attribute: str, monkeypatch) -> None:
    """Make ``module.attribute`` do its work, then raise KeyboardInterrupt (Ctrl-C in mid-write)."""
    real = getattr(module, attribute)

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(module, attribute, interrupted)


# (command arguments, module, attribute interrupted after doing its work: inside the write transaction)
CASES = {
    "import_kg": (lambda w: ["import_kg", "other", str(w / "fz")], "pooling.services.kg_import", "save_arrays"),
    "import_run": (lambda w: ["import_run", "fz", "all", str(w / "good.run"), "--name", "ext"],
                   "pooling.services.rankings", "save_arrays"),
    "import_pool": (lambda w: ["import_pool", "fz", str(w / "pool.tsv"), "--sample", str(w / "sample.txt")],
                    "pooling.services.pools", "write_entries"),
    "sample_test": (lambda w: ["sample_test", "fz", "--size", "2"], "pooling.services.samples", "relation_pks"),
    "import_judgments": (lambda w: ["import_judgments", "star", str(w / "labels.tsv")],
                         "annotation.services.imports", "BATCH"),
}


@pytest.mark.parametrize("command", CASES)
def test_ctrl_c_writes_nothing(world, storage, command, monkeypatch):
    import importlib

    from annotation.models import Item

    args, module_name, attribute = CASES[command]
    module = importlib.import_module(module_name)
    if attribute == "BATCH":  # interrupt the label update in its transaction
        real_filter = Item.objects.filter

        def filter_then_interrupt(*a, **kw):
            if "status__in" in kw:
                real_filter(*a, **kw).update(label="Y")
                raise KeyboardInterrupt
            return real_filter(*a, **kw)

        monkeypatch.setattr(Item.objects, "filter", filter_then_interrupt)
    else:
        _interrupt_after(module, attribute, monkeypatch)
    before = _state(storage)
    with pytest.raises(CommandError) as raised:
        call_command(*args(world), stdout=io.StringIO(), stderr=io.StringIO(), verbosity=0)
    assert str(raised.value) == "interrupted, nothing was written"
    assert raised.value.returncode == 130
    assert _state(storage) == before


def test_ctrl_c_on_the_command_line(tmp_path):
    """A real SIGINT to `manage.py import_kg` while it reads: one stderr line, exit status 130."""
    folder = write_kg(tmp_path / "ds", TRAIN, VALID, TEST)
    script = (
        "import os, signal, sys\n"
        "import django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'kgpool.settings')\n"
        "django.setup()\n"
        "import pooling.management.commands.import_kg as command\n"
        "def reading(*args, **kwargs):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    signal.pause()\n"  # Ctrl-C arrives while the import waits
        "command.import_kg = reading\n"
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(['manage.py', 'import_kg', 'x', sys.argv[1]])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["KGPOOL_VAR_DIR"] = str(tmp_path / "var")
    # As from a terminal: a shell that starts the suite in the background makes its children ignore SIGINT.
    done = subprocess.run([sys.executable, "-c", script, str(folder)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert done.returncode == 130, done.stderr
    assert done.stderr == "CommandError: interrupted, nothing was written\n", done.stderr
