"""Ids are sorted without a fixed-width unicode copy: one long id among many short ones costs its own length, not
(number of ids) x (longest id) x 4 bytes, as ``names.astype(str)`` did (issue #13, item 7). Reference order:
Python's ``sorted`` (code points, which is trec_eval's strcmp order on UTF-8)."""
from __future__ import annotations

import tracemalloc

import numpy as np

from evaluation.core.trec import Qrels, Run

LONG_ID = "z" * 100_000  # 400 KB as one numpy unicode element: x 1,001 ids = 400 MB the old way
PEAK_LIMIT = 32 << 20


def test_one_long_id_among_short_ones():
    docs = [f"d{i:04d}" for i in range(1000, 0, -1)] + [LONG_ID, "é", "Z"]
    tracemalloc.start()
    try:
        run = Run.from_dict({"q2": {doc: float(i) for i, doc in enumerate(docs)}, "q1": {LONG_ID: 1.0}})
        qrels = Qrels.from_columns(["q1"] * len(docs), docs, np.ones(len(docs), dtype=np.int64))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT, f"peak {peak / 2**20:.0f} MiB"
    for table in (run, qrels):
        assert list(table.doc_names) == sorted(docs)
    assert list(run.query_names) == ["q1", "q2"]
    assert run.doc_names[run.doc[run.query == 0]].tolist() == [LONG_ID]
    assert run.score[run.doc == list(run.doc_names).index("é")].tolist() == [float(docs.index("é"))]
