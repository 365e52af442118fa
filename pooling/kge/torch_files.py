"""Read ``torch.save`` files from outside without running anything from them (Django-free).

``torch.load`` is never given such a file: with ``weights_only=False`` it unpickles arbitrary code, and *any*
``torch.load`` hands a TorchScript archive to ``torch.jit.load``, which runs the archive's code (a scripted
``__setstate__`` can write files through ``torch.from_file(..., shared=True)``). Instead:

1. :func:`check_torch_archive` looks at the container before anything is unpickled: it must be the zip archive
   ``torch.save`` writes (PyTorch 1.6 and later), holding exactly its records (``data.pkl``, ``data/<key>``
   storages, ``byteorder``, ``version``...), stored uncompressed and intact. TorchScript archives
   (``constants.pkl``, ``code/``), plain pickles, PyTorch's legacy formats and anything else are refused with
   one line naming the file.
2. :func:`read_torch_archive` unpickles ``data.pkl`` with an allow-list: tensors are rebuilt by our own code
   from the archive's storage records (bounds checked), plain containers are real, every other class or function
   the pickle names becomes an inert :class:`Opaque` placeholder that only records what it was given, and a name
   outside the packages a PyKEEN file uses (``os.system``, ``builtins.exec``, ``subprocess``...) is refused.
"""
from __future__ import annotations

import _compat_pickle
import os
import pickle
import re
import sys
import tarfile
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch


class TorchFileError(ValueError):
    """A file was refused or could not be read; the message is one line naming the file."""


# ------------------------------------------------------------------------------------ the container
#: Records of a ``torch.save`` archive, below its one top-level folder (``data/<key>`` are the storages).
ARCHIVE_RECORDS = frozenset({"data.pkl", "byteorder", "version", ".format_version", ".storage_alignment",
                             ".data/serialization_id", ".data/version"})
_STORAGE_RECORD = re.compile(r"data/([A-Za-z0-9_.-]+)")
#: What ``torch.jit.save`` adds; ``torch.load`` would hand such an archive to ``torch.jit.load``, which runs it.
_TORCHSCRIPT_MARKS = ("constants.pkl", "code/", "extra/", ".data/ts_code/")
# torch.save's legacy (before 1.6) format starts with a pickled magic number
_LEGACY_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)[:-1]


def check_torch_archive(path: str | os.PathLike[str]) -> tuple[str, set[str]]:
    """(top-level folder, storage keys) of the ``torch.save`` archive at ``path``; raises :class:`TorchFileError`
    (one line naming the file) for anything else, before anything in it is unpickled or run."""
    path = Path(path)
    if not path.is_file():
        raise TorchFileError(f"{path}: no such file")
    what = f"{path}: cannot read it as a file written by torch.save"
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_LEGACY_MAGIC))
        if head[:4] != b"PK\x03\x04":
            if head == _LEGACY_MAGIC or tarfile.is_tarfile(path):
                raise TorchFileError(f"{what} (it is in PyTorch's legacy format from before 1.6, which is not read: "
                                     "load it in a trusted environment and save it again with torch.save)")
            raise TorchFileError(f"{what} (not the zip archive it writes; anything else, plain pickles included, "
                                 "is refused unread: unpickling can run code)")
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            names = [info.filename for info in infos]
            prefix = names[0].split("/", 1)[0] if names else ""
            inner = [name[len(prefix) + 1:] if name.startswith(prefix + "/") else None for name in names]
            if any(mark == name or (mark.endswith("/") and name.startswith(mark))
                   for name in inner if name is not None for mark in _TORCHSCRIPT_MARKS):
                raise TorchFileError(f"{path}: a TorchScript archive (torch.jit.save), refused without loading it: "
                                     "loading TorchScript runs the code inside it. Give the model's weights "
                                     "(torch.save / PyKEEN's own files) instead")
            if len(set(names)) != len(names):
                raise TorchFileError(f"{what} (the zip archive names a record twice)")
            keys = set()
            for name, short in zip(names, inner):
                match = _STORAGE_RECORD.fullmatch(short) if short is not None else None
                if short is None or (short not in ARCHIVE_RECORDS and match is None):
                    raise TorchFileError(f"{what} (unexpected record {name!r} in the zip archive)")
                if match is not None:
                    keys.add(match.group(1))
            if "data.pkl" not in inner:
                raise TorchFileError(f"{what} (the zip archive has no data.pkl)")
            if any(info.compress_type != zipfile.ZIP_STORED for info in infos):
                raise TorchFileError(f"{what} (compressed records; torch.save stores them as they are)")
            broken = archive.testzip()
            if broken is not None:
                raise zipfile.BadZipFile(f"bad CRC in {broken}")
            if "byteorder" in inner and archive.read(f"{prefix}/byteorder").strip() != sys.byteorder.encode():
                raise TorchFileError(f"{what} (saved on a machine of another byte order)")
    except (zipfile.BadZipFile, EOFError, OSError, tarfile.TarError):
        raise TorchFileError(f"{what} (the file is truncated or corrupt)") from None
    return prefix, keys


# ------------------------------------------------------------------------------------ inert placeholders
class Opaque:
    """Placeholder for a class or function named in a pickle: records the arguments and state it was given."""

    qualname: ClassVar[str] = "?"

    def __new__(cls, *args: Any, **kwargs: Any) -> Opaque:
        obj = super().__new__(cls)
        obj.args, obj.kwargs, obj.state, obj.items = args, kwargs, None, []
        return obj

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __call__(self, *args: Any, **kwargs: Any) -> Opaque:  # an opaque function's result is opaque too
        return opaque_class(self.qualname + "()")(*args, **kwargs)

    # list- and dict-like pickles (APPENDS / SETITEMS) just record their items
    def append(self, item: Any) -> None:
        self.items.append(item)

    def extend(self, items: Any) -> None:
        self.items.extend(items)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.items.append((key, value))

    def __repr__(self) -> str:
        return f"<opaque {self.qualname}>"

    @property
    def attributes(self) -> dict[str, Any]:
        """The object's ``__dict__`` as pickled (the first half of a ``(dict, slots)`` state)."""
        state = self.state[0] if isinstance(self.state, tuple) and len(self.state) == 2 else self.state
        return state if isinstance(state, dict) else {}


_OPAQUE_CLASSES: dict[str, type[Opaque]] = {}


def opaque_class(qualname: str) -> type[Opaque]:
    cls = _OPAQUE_CLASSES.get(qualname)
    if cls is None:
        cls = _OPAQUE_CLASSES[qualname] = type(qualname.rsplit(".", 1)[-1], (Opaque,), {"qualname": qualname})
    return cls


# ------------------------------------------------------------------------------------ the allow-list
def _opaque_getattr(obj: Any, name: str, *default: Any) -> Any:
    """``builtins.getattr`` as a pickle may use it: only on placeholders, giving another placeholder."""
    if isinstance(obj, type) and issubclass(obj, Opaque) or isinstance(obj, Opaque):
        return opaque_class(f"{obj.qualname}.{name}")
    raise pickle.UnpicklingError(f"refused getattr on {type(obj).__name__}")


def _numpy_dtype(spec: Any, *args: Any) -> Any:
    """``numpy.dtype`` for plain number / string dtypes (label maps may hold numpy strings); else a placeholder."""
    if isinstance(spec, str) and spec[:1] in ("b", "i", "u", "f", "c", "U", "S") and spec[1:].isdigit():
        return np.dtype(spec)
    return opaque_class("numpy.dtype")(spec, *args)


def _numpy_scalar(dtype: Any, data: Any = None) -> Any:
    """A numpy scalar of a plain dtype from its raw bytes (e.g. a ``numpy.str_`` label); else a placeholder."""
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcUS" and isinstance(data, bytes) \
            and len(data) == dtype.itemsize:
        return np.frombuffer(data, dtype=dtype)[0]
    return opaque_class("numpy.scalar")(dtype, data)


def _latin1_bytes(text: Any, encoding: str = "utf-8") -> Any:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes (``encode(str, "latin1")``)."""
    if isinstance(text, str) and encoding in ("latin1", "latin-1"):
        return text.encode("latin1")
    return opaque_class("_codecs.encode")(text, encoding)


class _Storage:
    """One storage record of the archive: its bytes and the dtype the pickle gives them."""

    def __init__(self, raw: torch.Tensor, dtype: torch.dtype):
        self.raw, self.dtype = raw, dtype
        self.numel = raw.numel() // torch.empty((), dtype=dtype).element_size()


def _int_tuple(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, (tuple, list, torch.Size)) and all(type(v) is int and v >= 0 for v in value):
        return tuple(value)
    return None


def _rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any, *rest: Any) -> torch.Tensor:
    """``torch._utils._rebuild_tensor(_v2)``: a tensor over one storage record, inside its bounds. Backward hooks
    and other extras are dropped; only the conj / neg bits of the metadata are kept."""
    sizes, strides = _int_tuple(size), _int_tuple(stride)
    if not isinstance(storage, _Storage) or type(offset) is not int or offset < 0 or sizes is None \
            or strides is None or len(sizes) != len(strides):
        raise pickle.UnpicklingError("a tensor with an invalid storage, offset, size or stride")
    last = offset + sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else -1
    if last >= storage.numel:
        raise pickle.UnpicklingError(f"a tensor reaching past its storage ({last + 1} > {storage.numel} elements)")
    tensor = torch.empty((0,), dtype=storage.dtype).set_(storage.raw.untyped_storage(), offset, sizes, strides)
    requires_grad = rest[0] if rest else False
    tensor.requires_grad = bool(requires_grad) and tensor.is_floating_point()
    metadata = rest[2] if len(rest) > 2 else None
    if isinstance(metadata, dict) and set(metadata) <= {"conj", "neg"} \
            and all(isinstance(v, bool) for v in metadata.values()):
        torch._utils.set_tensor_metadata(tensor, metadata)
    return tensor


def _rebuild_parameter(data: Any, requires_grad: Any = True, *ignored: Any) -> torch.nn.Parameter:
    """``torch._utils._rebuild_parameter(_with_state)``, without the backward hooks and Python state."""
    if not isinstance(data, torch.Tensor):
        raise pickle.UnpicklingError("a parameter that is not a tensor")
    return torch.nn.Parameter(data, bool(requires_grad) and data.is_floating_point())


#: The only globals a pickle gets for real; every other allowed name is a placeholder.
SAFE_GLOBALS: dict[tuple[str, str], Any] = {
    ("_codecs", "encode"): _latin1_bytes,
    ("numpy", "dtype"): _numpy_dtype,
    ("numpy.core.multiarray", "scalar"): _numpy_scalar, ("numpy._core.multiarray", "scalar"): _numpy_scalar,
    ("collections", "OrderedDict"): OrderedDict,
    ("builtins", "getattr"): _opaque_getattr,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "tuple"): tuple,
    ("builtins", "list"): list, ("builtins", "dict"): dict, ("builtins", "complex"): complex,
    ("builtins", "slice"): slice, ("builtins", "range"): range,
    ("torch", "Size"): torch.Size, ("torch", "device"): torch.device,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
}
#: ``torch.<Name>Storage`` -> the dtype of its elements (UntypedStorage: bytes).
STORAGE_TYPES: dict[str, torch.dtype] = {
    "UntypedStorage": torch.uint8, "ByteStorage": torch.uint8, "CharStorage": torch.int8,
    "ShortStorage": torch.int16, "IntStorage": torch.int32, "LongStorage": torch.int64, "BoolStorage": torch.bool,
    "HalfStorage": torch.float16, "BFloat16Storage": torch.bfloat16, "FloatStorage": torch.float32,
    "DoubleStorage": torch.float64, "ComplexFloatStorage": torch.complex64, "ComplexDoubleStorage": torch.complex128,
}
#: Packages whose other names become placeholders: what PyKEEN model and checkpoint pickles name.
PLACEHOLDER_PACKAGES = frozenset({"pykeen", "torch", "numpy", "collections", "functools", "copyreg", "class_resolver",
                                  "torch_max_mem", "typing"})


class _RefusedName(pickle.UnpicklingError):
    """The pickle names something outside the allow-list (``os.system``, ``builtins.exec``...)."""


class _ArchiveUnpickler(pickle.Unpickler):
    """Unpickles ``data.pkl`` of a checked archive: storages from its records, globals through the allow-list."""

    def __init__(self, stream: Any, archive: zipfile.ZipFile, prefix: str, keys: set[str]):
        super().__init__(stream)
        self.archive, self.prefix, self.keys = archive, prefix, keys
        self.storages: dict[str, _Storage] = {}

    def find_class(self, module: str, name: str) -> Any:
        # python 2 names (torch saves with protocol 2), mapped as pickle.Unpickler.find_class does (fix_imports)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        if (module, name) in SAFE_GLOBALS:
            return SAFE_GLOBALS[(module, name)]
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        if module == "torch" and name in STORAGE_TYPES:  # a storage type stands for its dtype
            return STORAGE_TYPES[name]
        if module.split(".", 1)[0] not in PLACEHOLDER_PACKAGES:
            raise _RefusedName(f"{module}.{name}")
        return opaque_class(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise pickle.UnpicklingError(f"unknown persistent id {str(pid)[:80]}")
        _kind, dtype, key, _location, numel = pid
        if not isinstance(dtype, torch.dtype) or not isinstance(key, str) or key not in self.keys \
                or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage reference {str(pid)[:80]}")
        storage = self.storages.get(key)
        if storage is None:
            info = self.archive.getinfo(f"{self.prefix}/data/{key}")
            nbytes = numel * torch.empty((), dtype=dtype).element_size()
            if info.file_size != nbytes:
                raise pickle.UnpicklingError(f"storage {key} holds {info.file_size} bytes, not {nbytes}")
            raw = torch.empty(nbytes, dtype=torch.uint8)
            with self.archive.open(info) as stream:
                if stream.readinto(memoryview(raw.numpy()).cast("B")) != nbytes:
                    raise EOFError(f"storage {key} is cut short")
            storage = self.storages[key] = _Storage(raw, dtype)
        elif storage.dtype != dtype:
            raise pickle.UnpicklingError(f"storage {key} read as {storage.dtype} and {dtype}")
        return storage


def read_torch_archive(path: str | os.PathLike[str]) -> Any:
    """The object saved with ``torch.save`` at ``path``: tensors (on the CPU) and plain containers are real, other
    classes :class:`Opaque` placeholders. Raises :class:`TorchFileError` (one line naming the file)."""
    path = Path(path)
    prefix, keys = check_torch_archive(path)
    try:
        with zipfile.ZipFile(path) as archive, archive.open(f"{prefix}/data.pkl") as stream:
            return _ArchiveUnpickler(stream, archive, prefix, keys).load()
    except (zipfile.BadZipFile, EOFError, OSError):
        raise TorchFileError(f"{path}: cannot read it as a file written by torch.save (the file is truncated or "
                             "corrupt)") from None
    except _RefusedName as exc:
        raise TorchFileError(f"{path}: refused: its pickle names {exc}, which no PyKEEN or PyTorch file does "
                             "(unpickling would call it); nothing from the file was run") from None
    except Exception as exc:  # refused name, bad opcode, a placeholder used as something it is not...
        detail = " ".join(str(exc).split())[:300]
        raise TorchFileError(f"{path}: cannot read it as a file written by torch.save ({type(exc).__name__}: "
                             f"{detail})") from None
