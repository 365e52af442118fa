"""Model files from users never run code (issue #13, item 1): a TorchScript archive whose loading writes a file
(its scripted __setstate__ writes through torch.from_file(shared=True)), as a PyKEEN trained_model.pkl or as a
.pt, and classic os.system / posix.system / builtins.exec pickles (protocols 0-5, plain and inside a torch.save
zip) are refused with one line naming the file, the files they would write stay untouched, and nothing is
imported. kgpool's own checkpoint loader refuses the same files. Each attack is first shown to be live."""
from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path
from typing import Tuple

import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import import_umls, storage  # noqa: F401

import torch  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")

ORIGINAL = b"untouched data\n"


class _Overwriter(torch.nn.Module):
    """Loading the scripted module overwrites the first bytes of ``target`` with 'X' (the reviewer's attack)."""

    def __init__(self, target: str):
        super().__init__()
        self.target = target
        self.written = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def __getstate__(self) -> Tuple[str, bool]:  # noqa: UP006 - TorchScript wants typing.Tuple
        return (self.target, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[str, bool]) -> None:  # noqa: UP006
        self.target = state[0]
        self.training = state[1]
        mapped = torch.from_file(self.target, shared=True, size=6, dtype=torch.uint8)
        self.written = int(mapped.fill_(88).sum())


def _torchscript_archive(path: Path, target: Path) -> Path:
    torch.jit.script(_Overwriter(str(target))).save(str(path))
    return path


class _Command:
    """Unpickling this runs ``function(argument)``: a shell command or Python source that creates a file."""

    def __init__(self, function, argument: str):
        self.function, self.argument = function, argument

    def __reduce__(self):
        return self.function, (self.argument,)


def _payloads(marker: Path) -> dict[str, _Command]:
    import builtins
    import posix

    return {
        "os.system": _Command(os.system, f"touch {marker}"),
        "posix.system": _Command(posix.system, f"touch {marker}"),
        "builtins.exec": _Command(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
    }


def _torch_zip(path: Path, pickled: bytes) -> Path:
    """A zip laid out exactly as torch.save writes it, whose data.pkl is ``pickled``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
    return path


def _one_line(message: str, path: Path, *words: str) -> None:
    first = message.splitlines()[0]
    assert str(path) in first and all(word in first for word in words), message
    assert "Traceback" not in message and len(message.splitlines()) <= 2, message  # + "Nothing was imported."


def test_the_attacks_are_live(tmp_path):
    """What the other tests refuse really runs code when loaded the usual way (so they can fail)."""
    decoy = tmp_path / "decoy"
    decoy.write_bytes(ORIGINAL)
    archive = _torchscript_archive(tmp_path / "trained_model.pkl", decoy)
    with pytest.warns(UserWarning, match="TorchScript"):
        torch.load(archive, weights_only=False)  # what kgpool did: torch.load dispatches to torch.jit.load
    assert decoy.read_bytes() == b"XXXXXX" + ORIGINAL[6:]
    for name, payload in _payloads(tmp_path / "made").items():
        pickle.loads(pickle.dumps(payload, protocol=2))
        assert (tmp_path / "made").exists(), name
        (tmp_path / "made").unlink()


@pytest.mark.django_db
def test_torchscript_archives_are_refused_unread(storage, tmp_path):  # noqa: F811
    from pooling.models import System

    import_umls()
    marker = tmp_path / "marker"
    marker.write_bytes(ORIGINAL)
    folder = tmp_path / "saved"
    folder.mkdir()
    _torchscript_archive(folder / "trained_model.pkl", marker)
    single = _torchscript_archive(tmp_path / "model.pt", marker)
    pickled = folder / "trained_model.pkl"
    cases = [(folder, [], pickled), (pickled, [], pickled),
             (single, ["--model", "TransE", "--option", "scoring_fct_norm=1"], single)]
    for given, extra, named in cases:
        with pytest.raises(CommandError) as error:
            call_command("import_checkpoint", "umls", str(given), "--name", "evil", *extra, verbosity=0)
        assert marker.read_bytes() == ORIGINAL, given
        _one_line(str(error.value), named, "TorchScript archive", "refused")
    assert not System.objects.exists() and not list(storage.rglob("*.pt"))


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_code_running_pickles_are_refused(protocol, storage, tmp_path):  # noqa: F811
    """Plain pickles are refused before unpickling; inside a torch.save zip, the names they call are refused."""
    from pooling.models import System

    import_umls()
    marker = tmp_path / "marker"
    for name, payload in _payloads(marker).items():
        pickled = pickle.dumps(payload, protocol=protocol)
        plain = tmp_path / f"plain-{name}.pt"
        plain.write_bytes(pickled)
        zipped = _torch_zip(tmp_path / f"zipped-{name}.pt", pickled)
        folder = tmp_path / f"saved-{name}"
        folder.mkdir()
        (folder / "trained_model.pkl").write_bytes(pickled)
        in_dict = _torch_zip(tmp_path / f"in-dict-{name}.pt", pickle.dumps(
            {"model_state_dict": {}, "entity_to_id_dict": {}, "relation_to_id_dict": {}, "x": payload},
            protocol=protocol))
        cases = [(plain, plain, "refused"), (folder, folder / "trained_model.pkl", "refused"),
                 (zipped, zipped, name.split(".")[0]), (in_dict, in_dict, name.split(".")[0])]
        for given, named, word in cases:
            with pytest.raises(CommandError) as error:
                call_command("import_checkpoint", "umls", str(given), "--name", "evil", "--model", "DistMult",
                             verbosity=0)
            assert not marker.exists(), (name, given)
            _one_line(str(error.value), named, word)
    assert not System.objects.exists() and not list(storage.rglob("*.pt"))


def test_kgpool_checkpoint_loader_refuses_them_too(tmp_path):
    from pooling.kge import build_model, load_checkpoint, save_checkpoint
    from pooling.kge.torch_files import TorchFileError

    marker = tmp_path / "marker"
    marker.write_bytes(ORIGINAL)
    created = tmp_path / "created"
    files = [_torchscript_archive(tmp_path / "script.pt", marker)]
    for name, payload in _payloads(created).items():
        files.append(_torch_zip(tmp_path / f"{name}.pt", pickle.dumps(payload, protocol=2)))
        (tmp_path / f"plain-{name}.pt").write_bytes(pickle.dumps(payload, protocol=2))
        files.append(tmp_path / f"plain-{name}.pt")
    for path in files:
        with pytest.raises(TorchFileError) as error:
            load_checkpoint(path, device="cpu")
        _one_line(str(error.value), path)
    assert marker.read_bytes() == ORIGINAL and not created.exists()
    # its own checkpoints still load
    model = build_model("distmult", 5, 2, dim=4)
    save_checkpoint(tmp_path / "ours.pt", model, {"architecture": "distmult"})
    loaded, _config, _metrics = load_checkpoint(tmp_path / "ours.pt", device="cpu")
    assert torch.equal(loaded.entity.weight, model.entity.weight)


class _FakeStorage:
    pass


class _OutOfBounds:
    """Pickles as a tensor of 1000 floats over a storage record of 4 (torch would grow it with uninitialised memory)."""

    def __init__(self, storage):
        self.storage = storage

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, (self.storage, 0, (1000,), (1,), False, {})


def test_tensors_stay_inside_their_storage(tmp_path):
    from pooling.kge.torch_files import TorchFileError, read_torch_archive

    storage = _FakeStorage()

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return ("storage", torch.FloatStorage, "0", "cpu", 4) if obj is storage else None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=2).dump({"weight": _OutOfBounds(storage)})
    path = _torch_zip(tmp_path / "oob.pt", buffer.getvalue())
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("archive/data/0", bytes(16))
    with pytest.raises(TorchFileError, match="reaching past its storage"):
        read_torch_archive(path)
    # the same layout within bounds reads
    torch.save({"weight": torch.arange(4.0)}, tmp_path / "fine.pt")
    assert torch.equal(read_torch_archive(tmp_path / "fine.pt")["weight"], torch.arange(4.0))
