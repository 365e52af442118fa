"""trec_eval()'s options and result: trec_eval's defaults (no -c, -l 1, no -J, no -M, -N 0), the whole-run values
(runid, num_q) only where asked for, a qrels query missing from the run (-c) ranked on one unjudged document, and a
result that cannot be changed after the fact. Hand-computed cases."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluation.core import measure_names
from evaluation.core.trec import Qrels, Run
from evaluation.core.trec_eval import TrecEvalOptions, TrecEvalResult, trec_eval

QRELS = {"a": {"x": 1, "y": 0}, "b": {"z": 1}}
RUN = {"a": {"x": 2.0, "u": 1.0}}


def run_trec_eval(specs: list[str], options: TrecEvalOptions = TrecEvalOptions()) -> TrecEvalResult:
    return trec_eval(Qrels.from_dict(QRELS), Run.from_dict(RUN, tag="mine"), measure_names.request(specs), options)


def test_default_options_are_trec_eval_s() -> None:
    defaults = TrecEvalOptions()
    assert dataclasses.astuple(defaults) == (False, 1, False, None, 0)
    assert defaults.complete is False and defaults.judged_only is False
    # -N 0: utility's d * (N + rel_ret - ret - rel) on query a: 0 + 1 - 2 - 1
    assert run_trec_eval(["utility.0,0,0,1"]).per_query["utility_0,0,0,1"].tolist() == [-2.0]


def test_whole_run_values_only_where_asked_for() -> None:
    assert run_trec_eval(["map"]).summary == {"map": 1.0}
    assert run_trec_eval(["num_q"]).summary == {"num_q": 1}
    assert run_trec_eval(["runid"]).summary == {"runid": "mine"}
    both = run_trec_eval(["runid", "num_q", "map"]).summary
    assert both == {"runid": "mine", "num_q": 1, "map": 1.0}


def test_a_missing_query_is_ranked_on_one_unjudged_document() -> None:
    # -c: query b (not in the run) retrieves one unjudged doc, so its relevant z comes after it at best: MR 2;
    # num_ret is then reset to 0
    result = run_trec_eval(["MR", "num_ret"], TrecEvalOptions(complete=True))
    assert result.query_ids.tolist() == ["a", "b"]
    assert result.per_query["MR"].tolist() == [1.0, 2.0]
    assert result.per_query["num_ret"].tolist() == [2.0, 0.0]
    assert result.summary == {"MR": 1.5, "num_ret": 2}


def test_result_is_frozen_and_its_summary_defaults_to_empty() -> None:
    result = run_trec_eval(["map"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.summary = {}
    bare = TrecEvalResult(np.array(["a"]), [], {})
    assert bare.summary == {} and bare.summary is not TrecEvalResult(np.array(["a"]), [], {}).summary
