"""--device names a device the project runs on (found from outside: `campaign apply --device tpu` was taken and
failed later, or never). Every command with the option refuses another name in argparse's one line."""
from __future__ import annotations

import argparse

import pytest
from django.core.management import CommandError, call_command

from kgpool.commands import device_name

COMMANDS = [["train_model", "kg", "transe"], ["import_checkpoint", "kg", "x.pt"], ["build_pool", "kg/s"],
            ["campaign", "apply", "c.toml"], ["evaluate", "c"], ["case_study"]]


@pytest.mark.parametrize("text", ["cpu", "cuda", "cuda:0", "cuda:12", " cuda:1 "])
def test_devices_taken(text):
    assert device_name(text) == text.strip()


@pytest.mark.parametrize("text", ["tpu", "gpu", "cuda:", "cuda:x", "cpu:0", "", "cuda:1;rm"])
def test_other_names_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="is not a device: cpu, cuda or cuda:N"):
        device_name(text)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[0] if args[0] != "campaign" else "campaign-apply")
def test_every_command_checks_it(args):
    with pytest.raises(CommandError, match="argument --device: 'tpu' is not a device: cpu, cuda or cuda:N"):
        call_command(*args, "--device", "tpu")
