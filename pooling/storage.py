"""Large arrays in files under settings.STORAGE_DIR, referenced from the database by relative path."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from django.conf import settings


def storage_path(relative: str) -> Path:
    root = Path(settings.STORAGE_DIR).resolve()
    path = (root / relative).resolve()
    if root not in path.parents:
        raise ValueError(f"{relative!r} points outside the storage folder")
    return path


def save_arrays(relative: str, **arrays: np.ndarray) -> str:
    """Write arrays atomically (temp file + rename) so a reader never sees half a file."""
    path = storage_path(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, suffix=".npz.part")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)
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
