"""Ctrl-C in `evaluate --save` keeps nothing: the command ends with one line and exit status 130, and neither the
EvaluationRun row nor its files under STORAGE_DIR remain, even when the interrupt comes after they were written."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from tests._evaluation_support import build_campaign
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_interrupted_save_keeps_nothing(storage, tmp_path, monkeypatch):
    from evaluation.models import EvaluationRun
    from evaluation.services import evaluate

    campaign = build_campaign(tmp_path, size=10, depth=2, architectures=("distmult",))
    real = evaluate.store_result

    def store_then_interrupt(run, result, **kwargs):
        real(run, result, **kwargs)
        assert (storage / "evaluation" / "runs" / str(run.pk) / "metrics.csv").is_file()  # written, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "store_result", store_then_interrupt)
    with pytest.raises(CommandError) as raised:
        call_command("evaluate", campaign.sample.name, labels=str(campaign.judgments), save=True, no_figures=True,
                     no_analyses=True, stdout=io.StringIO())
    assert (str(raised.value), raised.value.returncode) == ("interrupted, nothing was written", 130)
    assert not EvaluationRun.objects.exists()
    assert not list((storage / "evaluation" / "runs").iterdir())


def test_an_out_path_that_is_a_file_is_refused_before_the_work(storage, tmp_path):
    """`--out` naming an existing file ended a finished evaluation with a FileExistsError traceback."""
    from evaluation.models import EvaluationRun

    campaign = build_campaign(tmp_path, size=10, depth=2, architectures=("distmult",))
    taken = tmp_path / "results.toml"
    taken.write_text("keep me\n")
    with pytest.raises(CommandError, match=rf"^--out {taken}: not a folder \(the outputs are several files\)$"):
        call_command("evaluate", campaign.sample.name, labels=str(campaign.judgments), save=True, no_figures=True,
                     no_analyses=True, out=str(taken), stdout=io.StringIO())
    assert taken.read_text() == "keep me\n" and not EvaluationRun.objects.exists()
