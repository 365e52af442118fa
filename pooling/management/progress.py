"""A tqdm progress bar per stage, for management commands."""
from __future__ import annotations

import sys

from tqdm import tqdm


class StageProgress:
    """Callable (stage, done, total) that draws one bar per stage on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.stage: str | None = None
        self.bar: tqdm | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(total=total, desc=stage, unit="", file=sys.stderr, leave=True, dynamic_ncols=True)
        assert self.bar is not None
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "StageProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
