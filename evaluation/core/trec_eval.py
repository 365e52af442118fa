"""trec_eval's evaluation of a run against qrels, command-line options included (trec_eval 10, trec_eval.c).

- Queries evaluated: those in the qrels and the run, in qid string order; with ``complete`` (``-c``)
  every qrels query, a query missing from the run being evaluated, as trec_eval does, on a ranking of
  one unjudged document whose num_ret, utility, unj_*, rbp_resid and relstring are then reset to 0
  (or ''); averages are over the evaluated queries either way.
- ``max_retrieved`` (``-M``) keeps the first N documents of each ranking; ``judged_only`` (``-J``) then
  drops the documents not judged (absent from the qrels or judged < 0) and closes up the ranks;
  ``relevance_level`` (``-l``) is the lowest relevant value; ``num_docs_in_collection`` (``-N``) is
  used by ``utility``.
- Summary: mean over queries; sums for num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret; the
  geometric mean for gm_map, gm_bpref; ``runid`` is the run's tag, ``num_q`` the number of queries.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from evaluation.core.macro import evaluate, mean_over_queries
from evaluation.core.measure_names import Measure
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

#: Whole-run values: printed in the summary only, not computed per query.
RUN_VALUES = frozenset({"runid", "num_q"})


class NoQueriesError(ValueError):
    """No query is in both the qrels and the run (trec_eval exits with status 7)."""


@dataclass(frozen=True)
class TrecEvalOptions:
    complete: bool = False
    relevance_level: int = 1
    judged_only: bool = False
    max_retrieved: int | None = None
    num_docs_in_collection: int = 0


@dataclass(frozen=True)
class TrecEvalResult:
    """Per-query values (in ``query_ids`` order) and the summary row, keyed by printed measure name."""

    query_ids: np.ndarray
    measures: list[Measure]
    per_query: dict[str, np.ndarray]
    summary: dict[str, float | int | str] = field(default_factory=dict)


def trec_eval(qrels: Qrels, run: Run, measures: Sequence[Measure],
              options: TrecEvalOptions = TrecEvalOptions()) -> TrecEvalResult:
    """Evaluate ``run`` as ``trec_eval [options] -m ... qrels run`` does. Raises NoQueriesError."""
    judged = judged_ranking_from_trec(qrels, run, complete=options.complete,
                                      relevance_level=options.relevance_level)
    if judged.num_queries == 0:
        raise NoQueriesError("no queries with both results and relevance info")
    missing = ~np.isin(judged.query_ids, run.query_names)
    if missing.any():  # trec_eval -c: a one-document ranking of 'ceci_nest_pas_un_docno' (unjudged)
        judged = judged.with_num_ret(np.where(missing, 1, judged.num_ret))
    if options.max_retrieved is not None:
        judged = judged.truncated(options.max_retrieved)
    if options.judged_only:
        judged = judged.judged_only()
    values = evaluate(judged, [m for m in measures if m.base not in RUN_VALUES],
                      num_docs_in_collection=options.num_docs_in_collection)
    for name, per_query in values.items():  # trec_eval.c's clean-up of the missing queries' values
        if name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj"):
            per_query[missing] = 0.0
        elif name == "relstring":
            per_query[missing] = ""
    summary: dict[str, float | int | str] = dict(mean_over_queries(values, judged))
    for measure in measures:
        if measure.base == "runid":
            summary["runid"] = run.tag
        elif measure.base == "num_q":
            summary["num_q"] = judged.num_queries
    return TrecEvalResult(judged.query_ids, list(measures), values, summary)
