"""Large arrays in files under settings.STORAGE_DIR, referenced from the database by relative path."""
from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path
from typing import BinaryIO

import numpy as np
from django.conf import settings


def storage_path(relative: str) -> Path:
    root = Path(settings.STORAGE_DIR).resolve()
    path = (root / relative).resolve()
    if root not in path.parents:
        raise ValueError(f"{relative!r} points outside the storage folder")
    return path


WRITE_CHUNK_BYTES = 4 << 20  # a large array is copied into the file this much at a time


def _write_npz(stream: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez``'s layout (an uncompressed zip of .npy members), large C-ordered arrays copied row block by
    row block: a file-backed (memmap) score matrix of millions of entities is never copied whole (issue 18)."""
    with zipfile.ZipFile(stream, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asanyarray(value)
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                if array.ndim < 2 or array.nbytes <= WRITE_CHUNK_BYTES or not array.flags.c_contiguous \
                        or array.dtype.hasobject:
                    np.lib.format.write_array(member, array)
                    continue
                np.lib.format.write_array_header_2_0(member, np.lib.format.header_data_from_array_1_0(array))
                rows = max(1, WRITE_CHUNK_BYTES // max(1, array[0].nbytes))
                for start in range(0, len(array), rows):
                    member.write(np.ascontiguousarray(array[start:start + rows]).data)


def save_arrays(relative: str, **arrays: np.ndarray) -> str:
    """Write arrays atomically (temp file + rename) so a reader never sees half a file."""
    path = storage_path(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, suffix=".npz.part")
    try:
        with os.fdopen(handle, "wb") as stream:
            _write_npz(stream, arrays)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return relative


def remove_file(relative: str) -> None:
    """Remove a stored file (if there) and the folders it leaves empty (undoing a write that was rolled back)."""
    path = storage_path(relative)
    path.unlink(missing_ok=True)
    root = Path(settings.STORAGE_DIR).resolve()
    for folder in path.parents:
        if folder == root or root not in folder.parents:
            break
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): stop here
            break


def load_arrays(relative: str) -> dict[str, np.ndarray]:
    with np.load(storage_path(relative), allow_pickle=False) as data:
        return {name: data[name] for name in data.files}
