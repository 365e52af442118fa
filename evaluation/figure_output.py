"""Matplotlib without a display, and figure files written and closed: shared by every figure module."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path, *, tight: bool = True) -> bool:
    """Write the figure and close it (pyplot keeps every open figure alive otherwise)."""
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return True
