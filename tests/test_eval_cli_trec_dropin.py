"""``python -m evaluation trec`` takes trec_eval's command line and prints trec_eval's lines.

References: pytrec_eval's values formatted as trec_eval prints them (measure_print_single.c,
meas_print_final.c: ``%-22s\\t%s\\t%6.4f``, integers with ``%ld``), trec_eval's measure order (measures.c),
and the names / order of trec_eval's own expected outputs (usnistgov/trec_eval test/out.test,
test/out.test.meas_params).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytrec_eval_ext import RelevanceEvaluator as TrecEvalEvaluator  # noqa: E402

from evaluation.cli_trec import run as run_cli
from tests._trec_eval_support import random_campaign

REPO = Path(__file__).resolve().parent.parent


def cli(*argv: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_cli("trec", list(argv), out, err, io.BytesIO(stdin) if stdin is not None else None)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path, dict, dict]:
    qrels, run = random_campaign(11, queries=30)
    folder = tmp_path_factory.mktemp("dropin")
    qrels_path, run_path = folder / "qrels", folder / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s} tagA\n" for q, docs in run.items() for d, s in docs.items())
                        + "q1 Q0 extra-doc 0 -5 lastTag\n")
    run["q1"]["extra-doc"] = -5.0
    return qrels_path, run_path, qrels, run


def expected_lines(qrels: dict, run: dict, spec_names: list[tuple[str, list[str], str]]) -> str:
    """trec_eval's output built from pytrec_eval: per query, then 'all' (mean, sums, geometric means)."""
    values = {}
    for spec, names, key in spec_names:
        reference = TrecEvalEvaluator(query_relevance=qrels, measures={spec}, relevance_level=1,
                                      judged_docs_only_flag=0).evaluate(run)
        for name in names:
            values[name] = {qid: v[key if key else name] for qid, v in reference.items()}
    qids = sorted(values[spec_names[0][1][0]])
    lines = []
    for qid in qids:
        for name, per_query in values.items():
            if not name.startswith("gm_"):
                value = per_query[qid]
                text = str(int(value)) if name.startswith("num_") else f"{value:6.4f}"
                lines.append(f"{name:<22}\t{qid}\t{text}\n")
    for name, per_query in values.items():
        column = np.array([per_query[qid] for qid in qids])
        if name.startswith("num_"):
            text = str(int(column.sum()))
        else:
            text = f"{np.exp(column.mean()) if name.startswith('gm_') else column.mean():6.4f}"
        lines.append(f"{name:<22}\tall\t{text}\n")
    return "".join(lines)


def test_output_is_trec_eval_s_lines(files) -> None:
    qrels_path, run_path, qrels, run = files
    status, out, err = cli("-q", "-m", "num_ret", "-m", "ndcg", "-m", "set_F.0.5", "-m", "map", "-m", "gm_map",
                           "-m", "Rprec_mult.0.5,2", "-m", "P.5,10", str(qrels_path), str(run_path))
    assert status == 0 and err == ""
    # trec_eval's order (measures.c): num_ret map gm_map P Rprec_mult ndcg set_F, whatever the -m order
    expected = expected_lines(qrels, run, [
        ("num_ret", ["num_ret"], ""), ("map", ["map"], ""), ("gm_map", ["gm_map"], ""),
        ("P.5,10", ["P_5", "P_10"], ""), ("Rprec_mult.0.5,2", ["Rprec_mult_0.50", "Rprec_mult_2.00"], ""),
        ("ndcg", ["ndcg"], ""), ("set_F.0.5", ["set_F_0.5"], "set_F")])
    assert out == expected


def test_default_is_trec_eval_s_official_set(files) -> None:
    qrels_path, run_path, _, _ = files
    status, out, _ = cli(str(qrels_path), str(run_path))
    # the summary names of trec_eval's test/out.test (trec_eval qrels.test results.test)
    official = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                "recip_rank"] + [f"iprec_at_recall_{k / 10:.2f}" for k in range(11)] + [
                f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert status == 0 and [line.split("\t")[0].strip() for line in out.splitlines()] == official
    assert out.splitlines()[0] == "runid                 \tall\tlastTag"  # the last line's run tag


def test_measure_parameters_name_and_order_as_in_trec_eval_test_suite(files) -> None:
    # trec_eval Makefile quicktest: -q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000
    # -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5
    # -mndcg_cut.10,20,23.4 -msuccess.2,5,20 ; expected names from test/out.test.meas_params
    names = ["iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25", "iprec_at_recall_0.50",
             "iprec_at_recall_0.75", "P_3", "P_5", "P_7", "recall_20", "recall_2000", "Rprec_mult_0.20",
             "Rprec_mult_0.35", "Rprec_mult_5.00", "utility_2,-1,0,0", "11pt_avg_.25,.5,.75", "ndcg_1=3,2=9,4=4.5",
             "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23", "success_2", "success_5", "success_20"]
    qrels_path, run_path, _, _ = files
    status, out, _ = cli("-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
                         "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                         "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20",
                         str(qrels_path), str(run_path))
    rows = [line.split("\t") for line in out.splitlines()]
    queries = sorted({row[1] for row in rows} - {"all"})
    assert status == 0
    assert [(row[0].strip(), row[1]) for row in rows] == [(n, q) for q in queries + ["all"] for n in names]
    assert all(len(row[0]) >= 22 for row in rows)


def test_options_before_after_and_clustered_as_getopt_reads_them(files) -> None:
    qrels_path, run_path, _, _ = files
    reference = cli("-q", "-c", "-m", "map", str(qrels_path), str(run_path))
    assert reference[0] == 0
    for argv in (["-qc", "-mmap", str(qrels_path), str(run_path)],
                 [str(qrels_path), str(run_path), "-q", "-c", "-m", "map"],
                 ["--query_eval_wanted", "--complete", "--measure=map", str(qrels_path), str(run_path)],
                 ["-q", "-c", "--meas", "map", "--", str(qrels_path), str(run_path)],
                 [str(qrels_path), "-q", "-m", "map", "-c", str(run_path)]):
        assert cli(*argv) == reference, argv


def test_complete_prints_and_averages_the_missing_queries(files) -> None:
    qrels_path, run_path, qrels, run = files
    missing = sorted(set(qrels) - set(run))
    _, without, _ = cli("-q", "-m", "map", "-m", "num_ret", str(qrels_path), str(run_path))
    _, complete, _ = cli("-q", "-c", "-m", "map", "-m", "num_ret", str(qrels_path), str(run_path))
    assert missing and not any(f"\t{q}\t" in without for q in missing)
    for qid in missing:
        assert f"map                   \t{qid}\t0.0000\n" in complete
        assert f"num_ret               \t{qid}\t0\n" in complete
    per_query = [float(line.split("\t")[2]) for line in complete.splitlines() if line.startswith("map ")][:-1]
    assert len(per_query) == len(qrels)
    assert complete.splitlines()[-1] == f"map                   \tall\t{np.mean(per_query):6.4f}"  # num_ret comes first


def test_nosummary_judged_only_max_and_level_reach_the_evaluation(files) -> None:
    qrels_path, run_path, qrels, run = files
    status, out, _ = cli("-q", "-n", "-M", "3", "-m", "num_ret", str(qrels_path), str(run_path))
    assert status == 0 and "\tall\t" not in out
    assert {int(line.split("\t")[2]) for line in out.splitlines()} <= {1, 2, 3}
    status, out, _ = cli("-J", "-q", "-m", "num_ret", str(qrels_path), str(run_path))
    judged = {q: sum(1 for d in run[q] if qrels.get(q, {}).get(d, -1) >= 0) for q in run if q in qrels}
    assert {line.split("\t")[1]: int(line.split("\t")[2]) for line in out.splitlines()} == {
        **{q: n for q, n in judged.items()}, "all": sum(judged.values())}
    _, level2, _ = cli("-l2", "-m", "num_rel", str(qrels_path), str(run_path))
    relevant = sum(1 for q in run if q in qrels for v in qrels[q].values() if v >= 2)
    assert level2 == f"num_rel               \tall\t{relevant}\n"


def test_first_parameter_list_wins_single_cutoff_names_add_up(files) -> None:
    qrels_path, run_path, _, _ = files
    _, dotted, _ = cli("-m", "P.5", "-m", "P.10", str(qrels_path), str(run_path))
    assert [line.split("\t")[0].strip() for line in dotted.splitlines()] == ["P_5"]  # as trec_eval
    _, named, _ = cli("-m", "P_10", "-m", "P_5", str(qrels_path), str(run_path))
    assert [line.split("\t")[0].strip() for line in named.splitlines()] == ["P_5", "P_10"]


def test_input_tolerance_extra_fields_float_relevance_nan(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 a 1.5\nq 0 b 0.4\nq 0 c 2\n")  # atol: 1, 0, 2
    run = tmp_path / "run"
    run.write_text("q Q0 a 1 3.0 t extra fields\nq Q0 b 2 nan t\nq Q0 c 3 1.0 t\n")
    status, out, err = cli("-q", "-m", "num_rel", "-m", "relstring", str(qrels), str(run))
    assert status == 0, err
    # a (3.0) then b and c: b's NaN compares equal to c's 1.0, so docno descending puts c first
    assert out == "num_rel               \tq\t2\nrelstring             \tq\t'120'\nnum_rel               \tall\t2\n"


def test_exit_statuses_and_messages(files, tmp_path: Path) -> None:
    qrels_path, run_path, _, _ = files
    assert cli(str(qrels_path))[0] == 1  # usage: trec_eval exits 1
    assert cli("-x", str(qrels_path), str(run_path))[0] == 1
    assert cli(str(qrels_path), str(run_path), str(run_path))[0] == 1
    status, _, err = cli("-m", "mapp", str(qrels_path), str(run_path))
    assert status == 2 and err == "error: unknown measure 'mapp'\n"
    assert cli("-m", "P.0", str(qrels_path), str(run_path))[0] == 2
    assert cli("-R", "prefs", str(qrels_path), str(run_path))[0] == 2
    other = tmp_path / "other_run"
    other.write_text("zzz Q0 d 1 1 t\n")
    status, out, err = cli(str(qrels_path), str(other))
    assert (status, out) == (7, "")  # trec_eval: "No queries with both results and relevance info", 7
    assert err.startswith(f"error: {other}: no queries with both results and relevance info")
    status, _, err = cli(str(qrels_path), str(tmp_path / "absent"))
    assert status == 2 and err.startswith(f"error: {tmp_path / 'absent'}: cannot read file")
    assert cli("-v")[0] == 0 and "trec_eval version" in cli("-v")[2]
    assert cli("-h")[0] == 0 and "-m MEASURE" in cli("-h")[1]


def test_stdin_run_in_a_subprocess(files) -> None:
    qrels_path, run_path, _, _ = files
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    piped = subprocess.run([sys.executable, "-m", "evaluation", "trec", "-q", "-m", "map", str(qrels_path), "-"],
                           cwd=REPO, env=env, input=run_path.read_bytes(), capture_output=True, timeout=120)
    direct = subprocess.run([sys.executable, "-m", "evaluation", "trec", "-q", "-m", "map", str(qrels_path),
                             str(run_path)], cwd=REPO, env=env, capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stdout == direct.stdout and piped.stdout.count(b"\n") > 10
    bad = subprocess.run([sys.executable, "-m", "evaluation", "trec", str(qrels_path), "-"], cwd=REPO, env=env,
                         input=b"q1 Q0 d1 1 high t\n", capture_output=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr == b"error: <stdin>:1: score 'high' is not a number\n"


def test_summary_only_measures_have_no_per_query_lines(files) -> None:
    # trec_eval prints runid, num_q and the geometric means (gm_map, gm_bpref) in the summary only, even with -q
    qrels_path, run_path, qrels, run = files
    status, out, _ = cli("-q", "-m", "runid", "-m", "num_q", "-m", "gm_bpref", "-m", "gm_map", "-m", "num_ret",
                         str(qrels_path), str(run_path))
    rows = [line.split("\t") for line in out.splitlines()]
    per_query = {name.strip() for name, qid, _ in rows if qid != "all"}
    summary = [name.strip() for name, qid, _ in rows if qid == "all"]
    assert status == 0 and per_query == {"num_ret"}
    # one num_ret line per query that has judgments (trec_eval evaluates only those)
    assert sorted(qid for _name, qid, _ in rows if qid != "all") == sorted(set(qrels) & set(run))
    assert summary == ["runid", "num_q", "num_ret", "gm_map", "gm_bpref"]
