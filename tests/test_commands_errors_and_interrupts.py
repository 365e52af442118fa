"""Every kgpool management command handles errors and Ctrl-C the same way (kgpool.commands.KgpoolCommand): a
CommandError is one line, Ctrl-C and SIGTERM end the command with one line and exit status 130, and what the
command was writing is not left half-written (an export file, an evaluation run)."""
from __future__ import annotations

import io
import os
import signal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

from kgpool.commands import KgpoolCommand, written_atomically

ROOT = Path(__file__).resolve().parent.parent
OUR_APPS = ("kgpool", "pooling", "annotation", "evaluation")


def test_every_command_of_ours_is_a_kgpool_command():
    ours = {name: app for name, app in get_commands().items() if app in OUR_APPS}
    assert {"import_kg", "train_model", "import_checkpoint", "evaluate", "case_study", "export_judgments",
            "filter_pool", "create_campaign", "audit_campaign", "apply_audit_labels", "serve"} <= set(ours)
    plain = sorted(name for name, app in ours.items() if not isinstance(load_command_class(app, name), KgpoolCommand))
    assert plain == []


class Failing(KgpoolCommand):
    """A command whose handle does what the test asks."""

    def __init__(self, action) -> None:
        super().__init__(stdout=io.StringIO(), stderr=io.StringIO())
        self.action = action

    def handle(self, *args, **options) -> None:
        self.action(self)


def run(action) -> CommandError:
    with pytest.raises(CommandError) as raised:
        Failing(action).execute(verbosity=0, no_color=True, force_color=False, skip_checks=True)
    return raised.value


def test_an_error_message_is_one_line():
    def fail(command):
        raise CommandError("bad.tsv:3: name 'a\nb\x1b[31m' refused", returncode=3)

    error = run(fail)
    assert str(error) == "bad.tsv:3: name 'a\\nb\\x1b[31m' refused" and error.returncode == 3


def test_ctrl_c_and_sigterm_are_one_line_and_exit_status_130():
    def interrupt(command):
        raise KeyboardInterrupt

    error = run(interrupt)
    assert (str(error), error.returncode) == ("interrupted, nothing was written", 130)

    before = signal.getsignal(signal.SIGTERM)

    def terminated(command):
        command.interrupted_message = "stopped in stage 2"  # a stage that leaves something says so
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()

    error = run(terminated)
    assert (str(error), error.returncode) == ("stopped in stage 2", 130)
    assert signal.getsignal(signal.SIGTERM) is before


def test_written_atomically(tmp_path):
    target = tmp_path / "labels.tsv"
    target.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), written_atomically(target) as stream:
        stream.write("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["labels.tsv"]
    with written_atomically(target) as stream:
        stream.write("new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.django_db
def test_interrupted_export_leaves_no_file(tmp_path, monkeypatch):
    from annotation.services import exports
    from tests._annotation_support import star_campaign

    star_campaign(tmp_path / "star", items=2)
    real = exports.export_judgments

    def interrupted(campaign, fmt, out, **kwargs):
        real(campaign, fmt, out, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr("annotation.management.commands.export_judgments.export_judgments", interrupted)
    output = tmp_path / "out.tsv"
    with pytest.raises(CommandError) as raised:
        call_command("export_judgments", "star", "-o", str(output), stderr=io.StringIO())
    assert (str(raised.value), raised.value.returncode) == ("interrupted, nothing was written", 130)
    assert not output.exists() and not list(tmp_path.glob(".out.tsv.*"))
    with pytest.raises(CommandError, match=f"{tmp_path / 'absent'}/out.tsv: cannot write: No such file"):
        call_command("export_judgments", "star", "-o", str(tmp_path / "absent" / "out.tsv"), stderr=io.StringIO())
