"""The gain tables of evaluation.core.macro_gain on hand cases at their edges: a gain for level 0, a gain for a level
nobody judged, gains less than 1 apart (trec_eval's ``(int) (g1 - g2)`` order puts a zero gain on top), a non-positive
gain for the relevant level, no relevant document at all; against trec_eval's C code (pytrec_eval's extension) for
ndcg / Rndcg / G, and for ndcg_p (not in pytrec_eval) against a transliteration of m_ndcg_p.c and its setup_gains."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from pytrec_eval_ext import RelevanceEvaluator as TrecEvalEvaluator  # noqa: E402

from evaluation.core import measure_names
from evaluation.core.macro import JudgedRanking, evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec
from tests import _trec_eval_support as brute

# (qrels, run, trec_eval -m argument): each case is an edge of the level table
CASES = [
    # the only judgment is a level-0 doc given gain 2: level 0 is in the table (and the only level)
    ({"q": {"a": 0}}, {"q": {"a": 1.0, "b": 0.5}}, "ndcg.0=2"),
    ({"q": {"a": 0, "b": 0, "c": 1}, "r": {"x": 0}}, {"q": {"a": 1.0, "c": 0.5}, "r": {"x": 1.0}}, "ndcg.0=2"),
    # a gain for level 2 where nobody judged above level 1
    ({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5}}, "ndcg.2=5"),
    ({"q": {"a": 1, "b": 0}, "r": {"x": 0}}, {"q": {"b": 1.0, "a": 0.5}, "r": {"x": 1.0}}, "ndcg.2=5,1=3"),
    # level 1 gain 0.5: (int) (0.5 - 0) = 0 keeps level 0 (gain 0) above it, so there is no ideal, ndcg 0
    ({"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0, "c": 0.5}}, "ndcg.1=0.5"),
    ({"q": {"a": 1, "b": 1, "z": 0}}, {"q": {"a": 1.0, "c": 0.5}}, "ndcg.1=0.5"),
    ({"q": {"a": 1, "b": 1, "z": 0}}, {"q": {"a": 1.0, "c": 0.5}}, "ndcg_rel.1=0.5"),
    # nothing relevant anywhere: an empty ideal
    ({"q": {"a": 0, "b": 0}}, {"q": {"a": 1.0, "c": 0.5}}, "Rndcg"),
    ({"q": {"a": 0, "b": 0}, "r": {"x": 1}}, {"q": {"a": 1.0, "c": 0.5}, "r": {"y": 1.0}}, "Rndcg"),
    # a relevant level with a non-positive gain: relevant docs but no ideal; Rndcg is then 0 / 0
    ({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5, "c": 0.2}}, "Rndcg.1=-1"),
    ({"q": {"a": 1, "b": 0}}, {"q": {"b": 1.0, "a": 0.5, "c": 0.2}}, "Rndcg.1=0"),
    ({"q": {"a": 1, "b": 2}}, {"q": {"b": 1.0, "a": 0.5, "c": 0.2}}, "Rndcg.1=-1"),
]


def _values(qrels: dict, run: dict, specs: list[str]) -> dict[str, np.ndarray]:
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    return evaluate(judged, measure_names.request(specs))


@pytest.mark.parametrize(("qrels", "run", "spec"), CASES)
def test_level_table_edges_match_trec_eval(qrels: dict, run: dict, spec: str) -> None:
    ours = _values(qrels, run, [spec])
    reference = TrecEvalEvaluator(query_relevance=qrels, measures={spec}, relevance_level=1,
                                  judged_docs_only_flag=0).evaluate(run)
    for measure in measure_names.request([spec]):
        expected = [reference[qid][measure.base] for qid in sorted(set(qrels) & set(run))]
        np.testing.assert_allclose(ours[measure.name], expected, rtol=0, atol=1e-12, equal_nan=True,
                                   err_msg=measure.name)


def test_hand_values_of_the_edges() -> None:
    # the level-0 doc at rank 1 with gain 2 is the ideal itself
    assert _values({"q": {"a": 0}}, {"q": {"a": 1.0, "b": 0.5}}, ["ndcg.0=2"])["ndcg_0=2"].tolist() == [1.0]
    assert _values({"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0}}, ["ndcg.1=0.5"])["ndcg_1=0.5"].tolist() == [0.0]
    assert np.isnan(_values({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5}}, ["Rndcg.1=-1"])["Rndcg_1=-1"][0])


def test_several_gain_tables_in_one_evaluation() -> None:
    # the gains of each parameter set are cached apart: asking for them together gives what each gives alone
    qrels = {"q": {"a": 1, "b": 2, "c": 0}, "r": {"x": 2, "y": 1}}
    run = {"q": {"c": 3.0, "a": 2.0, "b": 1.0}, "r": {"y": 2.0, "z": 1.5, "x": 1.0}}
    specs = ["G", "G.1=2,2=5", "ndcg_rel.1=3", "ndcg_p", "ndcg_p.1=3", "rbp.2=4", "Rndcg.1=0.5"]
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    together = evaluate(judged, [m for spec in specs for m in measure_names.request([spec])])  # request merges a base
    assert len(together) == len(specs)
    for spec in specs:
        for name, values in _values(qrels, run, [spec]).items():
            assert together[name].tolist() == values.tolist(), name
    assert together["G"].tolist() != together["G_1=2,2=5"].tolist()
    assert together["ndcg_p"].tolist() != together["ndcg_p_1=3"].tolist()


def _setup_gains(judgments: dict[str, int], pairs: dict[int, float]) -> list[list]:
    """gain_init / setup_gains: [level, gain, docs at level] for the pairs, then the judged levels 0 .. max not
    among them; sorted by qsort with the comparator (int) (gain1 - gain2) (a stable sort on these small tables)."""
    counts = brute.level_counts(judgments)
    table = [[level, float(gain), 0] for level, gain in pairs.items()]
    for level, count in enumerate(counts):
        entry = next((row for row in table if row[0] == level), None)
        if entry is not None:
            entry[2] = count
        else:
            table.append([level, float(level), count])
    return sorted(table, key=functools.cmp_to_key(lambda a, b: int(a[1] - b[1])))


def brute_ndcg_p(ranked: list[int], judgments: dict[str, int], pairs: dict[int, float]) -> float:
    """m_ndcg_p.c, loop for loop."""
    gains = _setup_gains(judgments, pairs)
    gain_of = {level: gain for level, gain, _ in gains}
    total = 0.0
    for i, rel in enumerate(ranked):
        gain = gain_of.get(rel, 0.0)
        if gain != 0:
            total += gain / math.log2(i + 1) if i > 0 else gain
    cur_lvl, lvl_count, ideal = len(gains) - 1, 0, 0.0
    for i in range(sum(count for _, _, count in gains)):
        lvl_count += 1
        while lvl_count > gains[cur_lvl][2]:
            lvl_count = 1
            cur_lvl -= 1
            if cur_lvl < 0 or gains[cur_lvl][1] <= 0.0:
                break
        if cur_lvl < 0 or gains[cur_lvl][1] <= 0.0:
            break
        gain = gains[cur_lvl][1]
        ideal += gain if i == 0 else gain / float(np.float32(math.log2(i + 1)))
    if not any(rel >= 1 for rel in ranked):
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(total) / ideal)


NDCG_P_CASES = [
    # levels 0, 1, 2 with gains 0, 1, 3: the level-1 docs (gain 1) are in the ideal
    ({"a": 2, "b": 1, "c": 1, "d": 0, "e": 0}, {"e": 5.0, "b": 4.0, "x": 3.0, "a": 2.0, "c": 1.0}, {2: 3.0}),
    # gain 0 for level 1 and 3 for level 2: the walk stops at the first gain <= 0
    ({"a": 2, "b": 1, "c": 1, "d": 0}, {"b": 3.0, "a": 2.0, "d": 1.0}, {1: 0.0, 2: 3.0}),
    # level 1 gain 0.5, level-0 docs judged: the zero gain sorts on top, there is no ideal (sum / 0)
    ({"a": 1, "b": 1, "z": 0}, {"a": 1.0, "c": 0.5}, {1: 0.5}),
    # the same without a level-0 doc: the walk leaves the empty top level without checking its gain
    ({"a": 1, "b": 1}, {"a": 1.0, "c": 0.5}, {1: 0.5}),
    ({"a": 1, "b": 2}, {"b": 1.0, "a": 0.5}, {1: 0.4, 2: 0.3}),
    # the second level, gain 0 and no doc, still stops the walk (only the top one is passed over unchecked)
    ({"a": 2, "b": 1}, {"a": 1.0, "b": 0.5}, {1: 0.5, 2: 3.0}),
    # all three gains less than 1 apart: input order, the empty top (gain 0) passed over, level 2 (-0.3) stops it
    ({"a": 2, "b": 1}, {"a": 1.0, "b": 0.5}, {1: 0.5, 2: -0.3}),
    # negative gains, nothing relevant retrieved
    ({"a": 2, "b": 1, "c": 0}, {"a": 2.0, "b": 1.0}, {1: -1.0, 2: 4.0}),
    ({"a": 1, "b": 0}, {"b": 1.0, "x": 0.5}, {1: 2.0}),
]


@pytest.mark.parametrize(("judgments", "scores", "pairs"), NDCG_P_CASES)
def test_ndcg_p_with_gains_follows_m_ndcg_p(judgments: dict, scores: dict, pairs: dict) -> None:
    spec = "ndcg_p." + ",".join(f"{level}={gain}" for level, gain in pairs.items())
    (name, values), = _values({"q": judgments}, {"q": scores}, [spec]).items()
    expected = brute_ndcg_p(brute.ranked_relevance(judgments, scores), judgments, pairs)
    assert values[0] == pytest.approx(expected, rel=1e-7, nan_ok=True), (name, values[0], expected)


def brute_rbp_with_gains(ranked: list[int], judgments: dict[str, int], pairs: dict[int, float],
                         p: float = 0.9) -> float:
    """m_rbp.c: the gain table (setup_gains) rescaled to [0, 1] when a gain lies outside, then sum gain p^i."""
    gains = {level: gain for level, gain, _ in _setup_gains(judgments, pairs)}
    low, high = min(gains.values()), max(gains.values())
    if low < 0 or high > 1:
        gains = {level: (gain - low) / (high - low) for level, gain in gains.items()}
    return (1 - p) * sum(gains.get(rel, 0.0) * p ** i for i, rel in enumerate(ranked))


@pytest.mark.parametrize(("judgments", "scores", "pairs"), [
    # a gain for the level just above the highest judged one (2, judged up to 1) widens the range to rescale
    ({"a": 1, "b": 0, "c": 1}, {"a": 3.0, "x": 2.0, "b": 1.5, "c": 1.0}, {2: 5.0}),
    ({"a": 1, "b": 0}, {"b": 2.0, "a": 1.0}, {3: 0.5, 1: 0.25}),
    ({"a": 2, "b": 0, "c": -1}, {"c": 3.0, "a": 2.0, "b": 1.0}, {0: -1.0}),
    # gains in [0.5, 1]: left as they are; 1.5 (at most 2) above 1: rescaled
    ({"a": 1, "b": 0}, {"b": 2.0, "a": 1.0}, {0: 0.5}),
    ({"a": 1, "b": 0}, {"b": 2.0, "a": 1.0}, {1: 1.5}),
])
def test_rbp_with_gains_follows_m_rbp(judgments: dict, scores: dict, pairs: dict) -> None:
    spec = "rbp." + ",".join(f"{level}={gain}" for level, gain in pairs.items())
    (name, values), = _values({"q": judgments}, {"q": scores}, [spec]).items()
    expected = brute_rbp_with_gains(brute.ranked_relevance(judgments, scores), judgments, pairs)
    assert values[0] == pytest.approx(expected, rel=1e-12), name


def test_g_with_tied_ranks() -> None:
    # kgpool's optimistic policy gives tied answers the same integer rank: each entry of a rank costs what the
    # rank costs (max(ideal gain, 1) summed over the ideal positions up to it, 1 past the ideal), and the gain
    # gained so far is summed in entry order, as m_G.c sums it along its list
    query, rank, gain = [0, 0, 0, 1, 1], [1.0, 1.0, 3.0, 3.0, 3.0], [1, 1, 3, 1, 2]
    judged = JudgedRanking.from_judged_ranks(2, query, rank, relevant_gain=gain)
    values = evaluate(judged, ["G"])["G"]
    expected = []
    for q in range(2):
        entries = [(r, g) for qq, r, g in zip(query, rank, gain) if qq == q]
        ideal = sorted((g for _, g in entries), reverse=True)
        total = gained = 0.0
        for r, g in entries:
            cost = sum(max(ideal[j] if j < len(ideal) else 1.0, 1.0) for j in range(int(r)))
            gained += g
            total += g / math.log2(2.0 + cost - gained)
        expected.append(total / sum(ideal))
    assert values.tolist() == pytest.approx(expected, rel=1e-12)
