"""segment_sum keeps float64 even with no rows (numpy's bincount alone answers int64 then), which the metrics
divide into in place: found by the importer fuzzing of the evaluation CLI on a run with no judged rows."""
from __future__ import annotations

import numpy as np

from evaluation.core._util import segment_sum


def test_segment_sum_of_no_rows_is_float_zeros():
    sums = segment_sum(np.array([], dtype=np.float64), np.array([], dtype=np.int64), 3)
    assert sums.dtype == np.float64 and sums.tolist() == [0.0, 0.0, 0.0]
    # the in-place division the nDCG code does must work on it
    assert np.divide(sums, sums, out=sums.copy(), where=sums > 0).tolist() == [0.0, 0.0, 0.0]


def test_segment_sum_groups_by_segment():
    sums = segment_sum(np.array([0.5, 1.0, 2.0]), np.array([0, 2, 2]), 4)
    assert sums.dtype == np.float64 and sums.tolist() == [0.5, 0.0, 3.0, 0.0]
