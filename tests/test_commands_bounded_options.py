"""Numeric options of the management commands are parsed strictly and bounded (issue #13, item 7): a huge,
non-finite or non-ASCII value is a usage error naming the option, not an OverflowError, a database error or a
huge allocation later. In-process, argparse's error is a CommandError (exit status 2 on the command line, see
test_import_hostile_inputs.test_option_errors_on_the_command_line)."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

CASES = [
    # (command line, option named, reason)
    (["evaluate", "s", "--cutoff", "99999999999"], "--cutoff", "out of range"),
    (["evaluate", "s", "--cutoff", "0"], "--cutoff", "out of range"),
    (["evaluate", "s", "--bootstrap-samples", "1000000000"], "--bootstrap-samples", "out of range"),
    (["evaluate", "s", "--open-world-repeats", "²"], "--open-world-repeats", "not an integer"),
    (["evaluate", "s", "--depths", "0,1,x"], "--depths", "not an integer"),
    (["evaluate", "s", "--depths", "1,99999999999"], "--depths", "out of range"),
    (["case_study", "fb15k237", "--threads", "0"], "--threads", "out of range"),
    (["case_study", "fb15k237", "--epochs", "1" + "0" * 20], "--epochs", "out of range"),
    (["case_study", "fb15k237", "--sample-size", "\u0663"], "--sample-size", "not an integer"),
    (["train_model", "kg", "transe", "--dim", "1000000000000"], "--dim", "out of range"),
    (["train_model", "kg", "transe", "--lr", "nan"], "--lr", "not a finite number"),
    (["train_model", "kg", "transe", "--lr", "0"], "--lr", "out of range"),
    (["train_model", "kg", "transe", "--seed", "-1"], "--seed", "out of range"),
    (["create_campaign", "c", "p", "--timeout", "1" + "0" * 20], "--timeout", "out of range"),
    (["create_campaign", "c", "p", "--gold-rate", "nan"], "--gold-rate", "not a finite number"),
    (["campaign_quality", "c", "--samples", "1000000000"], "--samples", "out of range"),
    (["add_gold", "c", "--rate", "inf"], "--rate", "not a finite number"),
    (["audit_campaign", "c", "--draw", "1" + "0" * 20], "--draw", "out of range"),
    (["filter_pool", "p", "--threshold=-inf"], "--threshold", "not a finite number"),
    (["filter_pool", "p", "--type-max-overlap", "2"], "--type-max-overlap", "out of range"),
    (["relation_categories", "kg", "--threshold", "0"], "--threshold", "out of range"),
    (["pool_status", "99999999999"], "pool", "out of range"),
]


@pytest.mark.parametrize("argv, option, reason", CASES, ids=[" ".join(case[0][::2]) for case in CASES])
def test_out_of_range_options_are_usage_errors(argv, option, reason):
    with pytest.raises(CommandError) as raised:
        call_command(*argv, stdout=io.StringIO(), stderr=io.StringIO())
    message = str(raised.value)
    assert message.startswith(f"Error: argument {option}"), message
    assert reason in message and "\n" not in message, message
