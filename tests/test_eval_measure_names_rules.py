"""measure_names: trec_eval's -m parsing (meas_init.c / trec_eval.c rules), every refusal's message whole, the
default parameter lists, printed names and order, the summed measures. Hand-written expectations."""
from __future__ import annotations

import pytest

import dataclasses

from evaluation.core.measure_names import (
    KINDS,
    SUMMED,
    Measure,
    UnknownMeasureError,
    atof,
    atol,
    from_name,
    request,
)
from tests._raises_support import whole


def names(specs: list[str]) -> list[str]:
    return [measure.name for measure in request(specs)]


@pytest.mark.parametrize(("spec", "message"), [
    ("P.0,5", "cut-offs of 'P' must be positive, got '0,5'"),
    ("P.0.5", "cut-offs of 'P' must be positive, got '0.5'"),  # atol: 0.5 is 0
    ("P.5,5.5", "duplicate cut-offs in P.5,5.5"),
    ("iprec_at_recall.0.5,0.50", "duplicate cut-offs in iprec_at_recall.0.5,0.50"),
    ("ndcg.1", "malformed pair parameters in ndcg.1 (expected level=gain,...)"),
    ("ndcg.=3", "malformed pair parameters in ndcg.=3 (expected level=gain,...)"),
    ("ndcg.1=2=3", "malformed pair parameters in ndcg.1=2=3 (expected level=gain,...)"),
    ("ndcg.-1=2", "gain levels must be >= 0 in ndcg.-1=2"),
    ("ndcg.1=2,1=3", "a level is given two gains in ndcg.1=2,1=3"),
    ("ndcg.1=nan", "gains must be finite numbers in ndcg.1=nan"),
    ("Rprec_mult.-1", "cut-offs of 'Rprec_mult' must be finite numbers >= 0, got '-1'"),  # "unknown measure" before
    ("iprec_at_recall.0.5,inf", "cut-offs of 'iprec_at_recall' must be finite numbers >= 0, got '0.5,inf'"),  # a traceback before (found from outside)
    ("ndcg.0=1,1=inf", "gains must be finite numbers in ndcg.0=1,1=inf"),
    ("ndcg.1=-Infinity", "gains must be finite numbers in ndcg.1=-Infinity"),
    ("utility.1,2", "utility takes 4 coefficients, got '1,2'"),
    ("map.5", "measure 'map' takes no parameters"),
    ("prefs", "measure group 'prefs' needs preference judgments (-R prefs), which are not supported"),
    ("all_prefs", "measure group 'all_prefs' needs preference judgments (-R prefs), which are not supported"),
    ("qrels_jg", "measure group 'qrels_jg' needs preference judgments (-R prefs), which are not supported"),
    ("P.", "improper measure parameters in 'P.'"),
    ("P_0", "cut-off must be a positive integer in 'P_0'"),
    ("nope", "unknown measure 'nope'"),
])
def test_request_refusals(spec: str, message: str) -> None:
    with pytest.raises(UnknownMeasureError, match=whole(message)):
        request([spec])


@pytest.mark.parametrize(("name", "message"), [
    ("P", "measure 'P' needs a cut-off, e.g. P_10"),
    ("iprec_at_recall", "measure 'iprec_at_recall' needs a cut-off, e.g. iprec_at_recall_10"),
    ("ndcg_", "unknown measure 'ndcg_'"),
    ("nope", "unknown measure 'nope'"),
])
def test_from_name_refusals(name: str, message: str) -> None:
    with pytest.raises(UnknownMeasureError, match=whole(message)):
        from_name(name)


def test_names_and_order_of_a_mixed_request() -> None:
    assert names(["set", "P.5", "P_7", "map"]) == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "P_5", "P_7", "utility", "set_P",
        "set_relative_P", "set_recall", "set_map", "set_F"]
    assert names(["Rprec_mult"]) == [f"Rprec_mult_{value:.2f}" for value in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4,
                                                                             1.6, 1.8, 2.0)]
    assert names(["Rprec_mult.123456.5"]) == ["Rprec_mult_123456.5"]  # %3.2f cut to 8 characters of number


def test_parameterised_names_and_summed_measures() -> None:
    assert from_name("dcg_1=3").param == (("1", 3.0),) and from_name("ideal_dcg_2=1").param == (("2", 1.0),)
    assert from_name("set_F_1").param == (1.0,) and from_name("set_F_1").name == "set_F_1"
    assert SUMMED == {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def test_c_number_parsing() -> None:
    assert (atol("abc"), atol(" 23.4"), atol("-7x")) == (0, 23, -7)
    # what a long cannot hold is clamped to its limits, as glibc's atol (strtol) does
    assert (atol("9" * 20), atol("-" + "9" * 20)) == (2**63 - 1, -(2**63))
    assert (atol(str(2**63 - 1)), atol(str(-(2**63)))) == (2**63 - 1, -(2**63))
    assert (atof("abc"), atof(" .25e1x"), atof("-inf")) == (0.0, 2.5, float("-inf"))


def test_the_longest_parameterised_base_owns_a_printed_name() -> None:
    # rbp_resid_p=0.8 is rbp_resid's (p = 0.8), not rbp's with a parameter "resid_p"; ndcg_rel_1=3 is ndcg_rel's
    assert (from_name("rbp_resid_p=0.8").base, from_name("rbp_resid_p=0.8").param) == ("rbp_resid", (("p", 0.8),))
    assert (from_name("ndcg_rel_1=3").base, from_name("ndcg_rel_1=3").param) == ("ndcg_rel", (("1", 3.0),))
    assert (from_name("ideal_dcg_1=3").base, from_name("dcg_1=3").base) == ("ideal_dcg", "dcg")


def test_measures_are_values() -> None:
    # frozen: usable as keys (results are looked up by measure) and never changed in place
    first, again = from_name("P_10"), request(["P.10"])[0]
    assert first == again and hash(first) == hash(again) and len({first, again, from_name("P_5")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.param = 5


def test_every_kind_is_one_the_parser_knows() -> None:
    # the plain / long / string / gm measures take no parameters; each kind's parsing is checked above
    assert set(KINDS.values()) == {"plain", "long", "string", "gm", "cut", "cut_real", "real", "pairs"}
    assert {KINDS[name] for name in ("runid", "num_q", "map", "gm_map")} == {"string", "long", "plain", "gm"}
    assert Measure("map", None, "map").kind == "plain"
