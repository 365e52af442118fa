"""The pooling commands end to end in the embedded mode: train_model, sample_test, build_pool, pool_status;
bad input gives a CommandError and writes nothing."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import import_umls, storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_commands_train_sample_build(storage, tmp_path, capsys):
    from pooling.models import Pool, Sample, System

    import_umls()
    for arch in ("distmult", "transe"):
        call_command("train_model", "umls", arch, "--dim", "16", "--epochs", "2", "--lr", "0.05",
                     "--batch-size", "512", "--seed", "1", "--patience", "0", "--device", "cpu", "--threads", "1",
                     verbosity=0)
    out = capsys.readouterr().out
    assert "Trained umls/distmult (distmult): valid MRR" in out and "Trained umls/transe" in out
    assert System.objects.get(name="transe").config["epochs"] == 2
    with pytest.raises(CommandError, match="unknown architecture"):
        call_command("train_model", "umls", "nosuch", verbosity=0)
    with pytest.raises(CommandError, match="already exists"):
        call_command("train_model", "umls", "transe", verbosity=0)

    call_command("sample_test", "umls", "--size", "20", "--seed", "3", verbosity=0)
    call_command("sample_test", "umls", "--size", "20", "--seed", "3", "--stratified", "--name", "strat", verbosity=0)
    assert "relation KL divergence" in capsys.readouterr().out
    assert Sample.objects.get(name="strat").method == "stratified"
    with pytest.raises(CommandError, match="cannot sample 99999"):
        call_command("sample_test", "umls", "--size", "99999", verbosity=0)
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n2\nx y\n")
    with pytest.raises(CommandError, match=r"bad.txt:3: expected a test index or a triple"):
        call_command("sample_test", "umls", "--from-file", str(bad), verbosity=0)
    assert Sample.objects.count() == 2

    call_command("build_pool", "uniform-20-seed3", "--systems", "distmult,transe", "--depth", "3", verbosity=0)
    pool = Pool.objects.get()
    assert pool.status == "done" and pool.entries.count() > 0
    assert f"{pool.entries.count():,} entries" in capsys.readouterr().out
    call_command("build_pool", "umls/uniform-20-seed3", "--systems", "distmult,transe", "--depth", "3", verbosity=0)
    assert Pool.objects.count() == 1
    with pytest.raises(CommandError, match="no system 'nope'"):
        call_command("build_pool", "strat", "--systems", "distmult,nope", verbosity=0)
    with pytest.raises(CommandError, match="no sample 'nosample'"):
        call_command("build_pool", "nosample", "--systems", "distmult", verbosity=0)
    call_command("pool_status", verbosity=0)
    assert "done  chunks 2/2" in capsys.readouterr().out
