"""Result tables as JSON: NaN and infinities become null, numpy numbers plain ones (the report's summary.json,
the API and the protocol sections)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.floating,)):
        return json_safe(float(value))
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def records(frame: pd.DataFrame, index_name: str | None = None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    data = frame.reset_index() if index_name else frame
    return [json_safe(row) for row in data.to_dict(orient="records")]
