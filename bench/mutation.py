"""Mutation testing of one module at a time with mutmut 2.5.1 (issue #19). Not part of the suite (too slow).

    nice -n 19 .venv/bin/python bench/mutation.py evaluation/core/kendall.py [--tests tests/test_x.py ...]
    nice -n 19 .venv/bin/python bench/mutation.py --list        # the module -> test files mapping
    nice -n 19 .venv/bin/python bench/mutation.py evaluation/core/trec.py --function parse_run --lines 300-340

--lines / --function restrict a large module to some of its lines (1-based, inclusive; a function or method
name covers its whole definition, decorators included): the other mutants are skipped (no test run, not in the
score). The filter is a mutmut pre-mutation hook, bench/mutmut_hooks/mutmut_config.py.

mutmut rewrites the module in place, one mutant at a time, and runs only the test files that cover that module
(TESTS below, or --tests), never the whole suite; the first failing test kills the mutant (pytest -x). The
Django-free modules' tests run with pytest-django switched off (-p no:django), which takes the start-up of each
run from about 5 s to about 1 s; modules whose tests need the database are listed in NEEDS_DJANGO.

Printed: the number of mutants, killed, timed out, survived, suspicious, skipped, and the score
killed / (killed + survived), where timeouts (a mutant that makes the tests run far longer, e.g. an endless loop)
are counted as killed; then the diff of each surviving mutant. The equivalent survivors (no input can tell them
apart from the original) are listed with a reason each in bench/mutation-equivalent.md.

mutmut keeps its state in ./.mutmut-cache (ignored by git); this script removes it before each run so that every
run starts fresh. Run it in a worktree nobody else is using: the module is edited on disk while it runs (mutmut
restores it at the end, and on Ctrl-C).
Do not run `mutmut show` (or anything else that opens .mutmut-cache) while a run is in progress: it corrupts the
run's cache ("Mutant.line is required"); read the survivors afterwards, or from a copy of the cache.
"""
from __future__ import annotations

import argparse
import ast
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mutmut-cache"
HOOKS = Path(__file__).resolve().parent / "mutmut_hooks"

# Every measure of the macro table is checked against trec_eval (pytrec_eval's C code) or a brute force only by the
# trec_* files, which reach macro.evaluate through trec_eval(); without them 40-odd table entries go untested. The
# macro measure modules are reached the same way: they share these files.
MACRO_FILES = ["tests/test_eval_macro_bpref_infap.py", "tests/test_eval_macro_ranks.py",
               "tests/test_eval_macro_pytrec.py", "tests/test_eval_macro_summary.py",
               "tests/test_eval_trec_options.py", "tests/test_eval_trec_measures_pytrec.py"]

# module -> the test files that exercise it (the ones that import it, minus slow end-to-end ones).
TESTS: dict[str, list[str]] = {
    "evaluation/core/kendall.py": ["tests/test_eval_kendall_core.py"],
    "evaluation/core/micro.py": ["tests/test_eval_micro_metrics.py", "tests/test_eval_micro_reweight.py"],
    "evaluation/core/macro.py": MACRO_FILES,
    "evaluation/core/macro_rank.py": MACRO_FILES,
    "evaluation/core/macro_gain.py": ["tests/test_eval_macro_gain_levels.py", *MACRO_FILES],
    # (test_eval_macro_ranx.py left out: ~55 s a run)
    "evaluation/core/judged_ranking.py": ["tests/test_eval_judged_ranking_core.py",
                                          "tests/test_eval_macro_bpref_infap.py", "tests/test_eval_macro_ranks.py",
                                          "tests/test_eval_macro_pytrec.py", "tests/test_eval_macro_summary.py",
                                          "tests/test_eval_trec_options.py", "tests/test_eval_trec_ties.py",
                                          "tests/test_eval_trec_nan_scores.py",
                                          "tests/test_eval_trec_measures_pytrec.py"],
    # (test_evaluation_report_summary.py, the report page, needs the database: left out)
    "evaluation/core/summary.py": ["tests/test_eval_summary_core.py"],
    "evaluation/core/rank_family.py": ["tests/test_eval_rank_family_hand.py", "tests/test_eval_rank_family_rules.py",
                                       "tests/test_eval_rank_family_pykeen.py"],
    "evaluation/core/trec.py": ["tests/test_eval_trec_io.py", "tests/test_eval_trec_nan_scores.py",
                                "tests/test_eval_trec_options.py", "tests/test_eval_trec_ties.py",
                                "tests/test_eval_trec_measures_pytrec.py", "tests/test_eval_trec_long_ids_memory.py",
                                "tests/test_eval_trec_types.py", "tests/test_eval_trec_errors.py",
                                "tests/test_eval_trec_fast_path.py", "tests/test_eval_trec_query_selection.py"],
    "evaluation/core/probe.py": ["tests/test_eval_probe_core.py", "tests/test_eval_probe_self_loops.py"],
    # the Django-free files only (test_annotation_agreement_ci.py / _cant_tell.py need the database)
    "annotation/lib/agreement.py": ["tests/test_annotation_agreement.py", "tests/test_annotation_agreement_stats.py"],
    "annotation/lib/rules.py": ["tests/test_annotation_rules.py"],
    "annotation/lib/evidence.py": ["tests/test_annotation_evidence_rules.py"],
    "annotation/lib/sources.py": ["tests/test_annotation_sources.py"],
    # the annotation services: the SQLite test files that call them (browser, live-server and PostgreSQL-only left out)
    "annotation/services/adjudication.py": ["tests/test_annotation_adjudication_rules.py",
                                            "tests/test_annotation_adjudication.py",
                                            "tests/test_annotation_consistency.py",
                                            "tests/test_annotation_cant_tell.py"],
    "annotation/services/judging.py": ["tests/test_annotation_judging_rules.py",
                                       "tests/test_annotation_judging_submit_rules.py",
                                       "tests/test_annotation_judging.py", "tests/test_annotation_cant_tell.py"],
    "annotation/services/distribution.py": ["tests/test_annotation_distribution_rules.py",
                                            "tests/test_annotation_work_distribution.py",
                                            "tests/test_annotation_stale_hand_outs.py"],
    "pooling/engine/questions.py": ["tests/test_engine_questions_rules.py", "tests/test_engine_questions.py",
                                    "tests/test_known_answers_few_questions.py"],
    "pooling/engine/categories.py": ["tests/test_engine_categories_rules.py", "tests/test_engine_categories.py"],
    # the Django-free *_rules files (test_annotation_item_state.py / test_annotation_undo.py need the database)
    "annotation/lib/item_state.py": ["tests/test_annotation_item_state_rules.py"],
    "annotation/lib/undo.py": ["tests/test_annotation_undo_rules.py"],
    "annotation/lib/judging_progress.py": ["tests/test_judging_progress_rules.py"],
    "annotation/lib/judging_order.py": ["tests/test_judging_order_rules.py", "tests/test_judging_order_choice.py",
                                        "tests/test_judging_order_cal.py", "tests/test_judging_simulation_replay.py",
                                        "tests/test_reusability_leave_one_out.py"],
    "annotation/lib/type_rule.py": ["tests/test_annotation_type_rule_rules.py", "tests/test_annotation_type_rule.py",
                                    "tests/test_annotation_type_rule_model_frozen.py",
                                    "tests/test_annotation_type_rule_partial_declarations.py"],
    "annotation/lib/cal_order.py": ["tests/test_judging_order_cal_rules.py", "tests/test_judging_order_cal.py",
                                    "tests/test_judging_order_cal_min_class.py",
                                    "tests/test_judging_order_cal_role_yield.py",
                                    "tests/test_judging_order_cal_entity_ids.py",
                                    "tests/test_judging_order_cal_logistic_intercept.py",
                                    "tests/test_judging_order_cal_logistic_clip.py",
                                    "tests/test_judging_order_cal_newton_stop.py",
                                    "tests/test_judging_order_cal_feature_scale.py",
                                    "tests/test_judging_order_cal_key_ties.py",
                                    "tests/test_judging_order_cal_flat_features.py"],
    # (test_judging_simulation_umls.py, a whole UMLS replay, left out: slow)
    "annotation/lib/judging_simulation.py": ["tests/test_judging_simulation_rules.py",
                                             "tests/test_judging_simulation_replay.py"],
    "annotation/lib/judging_pool.py": ["tests/test_judging_pool_rules.py", "tests/test_judging_order_choice.py",
                                       "tests/test_judging_pool_defaults.py", "tests/test_judging_pool_small_cases.py",
                                       "tests/test_judging_pool_cached.py"],
    "annotation/lib/templates.py": ["tests/test_annotation_templates_rules.py"],
    "annotation/lib/guidelines.py": ["tests/test_annotation_templates_rules.py",
                                     "tests/test_annotation_guidelines_markdown.py"],
    "pooling/engine/sampling.py": ["tests/test_engine_sampling_rules.py", "tests/test_engine_sampling.py"],
    # (torch-using; test_rank_entity_blocks.py ~17 s a run: --tests without it for the parts it does not reach)
    "pooling/engine/ranking.py": ["tests/test_rank_ranking_rules.py", "tests/test_rank_bruteforce.py",
                                  "tests/test_rank_result_io.py", "tests/test_rank_entity_blocks.py",
                                  "tests/test_rank_blocked_passes.py"],
    # (test_import_streamed.py, the importers' streamed reads, needs the database: left out)
    "pooling/engine/npzfiles.py": ["tests/test_engine_npzfiles_rules.py", "tests/test_engine_userfiles.py"],
    # read_kg gives the same result whether kgfast accepts a file or declines it: the rules file calls it directly
    # (test_fuzz_import_kg.py has a database test: left out)
    "pooling/engine/kgfast.py": ["tests/test_engine_kgfast_rules.py", "tests/test_engine_kgfiles.py"],
    # (the importers' Django tests, test_import_*.py, left out: they need the database)
    "pooling/engine/kgfiles.py": ["tests/test_engine_kgfiles_rules.py", "tests/test_engine_kgfiles.py",
                                  "tests/test_engine_kgfiles_entity_metadata.py"],
    "pooling/engine/userfiles.py": ["tests/test_engine_userfiles_rules.py", "tests/test_engine_userfiles.py"],
    # (test_engine_kgfast_memory.py, a 2 s generate + read, left out: the rules file states the algorithm)
    "pooling/engine/synthkg.py": ["tests/test_engine_synthkg_rules.py"],
    # (test_evaluation_protocols_umls.py, the whole UMLS protocol end to end, left out: slow)
    "evaluation/core/classification.py": ["tests/test_evaluation_classification_rules.py",
                                          "tests/test_evaluation_classification_thresholds.py",
                                          "tests/test_evaluation_classification_auc.py"],
    "evaluation/core/negatives.py": ["tests/test_evaluation_negatives_rules.py",
                                     "tests/test_evaluation_classification_negatives.py"],
    "evaluation/core/pair_ranking.py": ["tests/test_evaluation_pair_ranking_rules.py",
                                       "tests/test_evaluation_pair_ranking_metrics.py",
                                       "tests/test_evaluation_pair_ranking_blocked.py",
                                       "tests/test_evaluation_pair_ranking_model.py"],
    "evaluation/core/reusability.py": ["tests/test_reusability_rules.py", "tests/test_reusability_leave_one_out.py"],
    "evaluation/core/property_prediction.py": ["tests/test_evaluation_property_prediction_rules.py",
                                               "tests/test_evaluation_property_prediction.py",
                                               "tests/test_evaluation_pair_ranking_model.py"],
    # the shared helpers: segment sums (macro measures), codes, grouping, ordering and matching (trec conversion)
    "evaluation/core/_util.py": ["tests/test_eval_util_rules.py", "tests/test_eval_segment_sum.py",
                                 "tests/test_eval_macro_context_hand.py",
                                 "tests/test_eval_judged_ranking_core.py", "tests/test_eval_trec_ties.py",
                                 "tests/test_eval_trec_nan_scores.py", "tests/test_eval_trec_query_selection.py",
                                 "tests/test_eval_trec_io.py", "tests/test_eval_trec_errors.py",
                                 "tests/test_eval_trec_types.py", "tests/test_eval_trec_fast_path.py",
                                 "tests/test_eval_trec_long_ids_memory.py", "tests/test_eval_macro_gain_levels.py",
                                 "tests/test_eval_macro_ranks.py", "tests/test_eval_macro_bpref_infap.py",
                                 "tests/test_eval_macro_summary.py", "tests/test_eval_trec_options.py",
                                 "tests/test_eval_macro_pytrec.py", "tests/test_eval_trec_measures_pytrec.py"],
    "evaluation/core/analyses.py": ["tests/test_eval_analyses_rules.py", "tests/test_eval_analysis_core.py",
                                    "tests/test_eval_analyses_data_sensitivity.py",
                                    "tests/test_eval_analyses_bootstrap_hand.py"],
    # measure names: macro.evaluate reads them (from_name), the trec_* files request them; the drop-in CLI file
    # checks trec_eval's parameter lists, printed names and order (one subprocess test, ~5 s in all)
    "evaluation/core/measure_names.py": ["tests/test_eval_measure_names_rules.py",
                                         "tests/test_eval_macro_gain_levels.py",
                                         *MACRO_FILES, "tests/test_eval_cli_trec_dropin.py"],
    # trec_eval(): the files that call it (options -c / -M / -J / -l / -N, every measure against pytrec_eval)
    "evaluation/core/trec_eval.py": ["tests/test_eval_trec_eval_result.py", "tests/test_eval_trec_options.py",
                                     "tests/test_eval_trec_measures_pytrec.py", "tests/test_eval_macro_gain_levels.py",
                                     "tests/test_eval_macro_pytrec.py", "tests/test_eval_cli_trec_dropin.py"],
    # the per-entry quantities of the macro measures: reached through macro.evaluate, the same files as macro.py
    "evaluation/core/macro_context.py": ["tests/test_eval_macro_context_hand.py", *MACRO_FILES],
    # (test_campaign_file_parse.py's Django test is deselected, DESELECT below; the other campaign-file test files
    # apply a campaign to the database: left out)
    "annotation/lib/campaign_file.py": ["tests/test_campaign_file_rules.py", "tests/test_campaign_file_parse.py"],
}
# tests left out of a module's files (pytest --deselect): the Django tests of a file whose other tests are
# Django-free. (Not node ids in TESTS: a mutant that breaks the module's import makes pytest exit 4, "found no
# collectors", for a node id, which mutmut takes for a pass; a deselected file exits 1 like any other.)
DESELECT: dict[str, list[str]] = {
    "annotation/lib/campaign_file.py": ["tests/test_campaign_file_parse.py::test_roles_and_the_examples"],
}
# modules whose tests use the Django test database (run with pytest-django on).
NEEDS_DJANGO: set[str] = {"annotation/services/adjudication.py", "annotation/services/judging.py",
                          "annotation/services/distribution.py"}


def pytest_command(test_files: list[str], django: bool, deselect: list[str] | None = None) -> str:
    plugins = [] if django else ["-p", "no:django", "-p", "no:schemathesis"]
    plugins += [option for node_id in deselect or () for option in ("--deselect", node_id)]
    # --continue-on-collection-errors: a mutant that breaks the module's import (``A, B = None``, a removed
    # @dataclass that a test file calls at import time) makes pytest exit 2 at collection, which mutmut 2.5.1 takes
    # for a pass ("survived": it only counts exit code 1 as failing); with the option pytest exits 1
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
            *plugins, *test_files]
    return shlex.join(args)


def line_ranges(module: Path, lines: list[str], functions: list[str]) -> list[tuple[int, int]]:
    """1-based inclusive ranges from "A-B" (or "A") strings and function / method names (every definition)."""
    ranges = []
    for text in lines:
        first, _, last = text.partition("-")
        ranges.append((int(first), int(last or first)))
    if functions:
        definitions = [node for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
                       if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for name in functions:
            found = [node for node in definitions if node.name == name]
            if not found:
                raise ValueError(f"{module.name}: no function or class named {name!r}")
            ranges += [(min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno)
                       for node in found]
    return ranges


def counts_from_cache() -> dict[str, int]:
    with sqlite3.connect(CACHE) as db:
        rows = db.execute("SELECT status, COUNT(*) FROM Mutant GROUP BY status").fetchall()
    return dict(rows)


def survivor_ids() -> list[int]:
    with sqlite3.connect(CACHE) as db:
        rows = db.execute("SELECT id FROM Mutant WHERE status = 'bad_survived' ORDER BY id").fetchall()
    return [row[0] for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", nargs="?", help="path of the module to mutate, e.g. evaluation/core/kendall.py")
    parser.add_argument("--tests", nargs="+", help="test files to run per mutant (default: the mapping above)")
    parser.add_argument("--list", action="store_true", help="print the module -> test files mapping and stop")
    parser.add_argument("--lines", nargs="+", default=[], metavar="A-B",
                        help="mutate only these 1-based line ranges (inclusive)")
    parser.add_argument("--function", nargs="+", default=[], metavar="NAME",
                        help="mutate only these functions, methods or classes (with --lines: either)")
    options = parser.parse_args()
    if options.list or not options.module:
        for module, files in TESTS.items():
            print(f"{module}: {' '.join(files)}")
        return 0
    module = options.module
    if not (ROOT / module).is_file():
        parser.error(f"{module}: no such file under {ROOT}")
    test_files = options.tests or TESTS.get(module)
    if not test_files:
        parser.error(f"{module}: no test files mapped; pass --tests tests/test_x.py ...")
    for test_file in test_files:
        if not (ROOT / test_file).is_file():
            parser.error(f"{test_file}: no such test file")

    try:
        ranges = line_ranges(ROOT / module, options.lines, options.function)
    except ValueError as error:
        parser.error(str(error))
    deselect = [node_id for node_id in DESELECT.get(module, []) if node_id.split("::")[0] in test_files]
    runner = pytest_command(test_files, django=module in NEEDS_DJANGO, deselect=deselect)
    baseline = subprocess.run(shlex.split(runner), cwd=ROOT, capture_output=True, text=True)
    if baseline.returncode != 0:
        print(baseline.stdout[-3000:], baseline.stderr[-3000:], sep="\n")
        print(f"the tests fail on the unmutated module; fix them first: {runner}", file=sys.stderr)
        return 1
    CACHE.unlink(missing_ok=True)
    # the hook module is imported by mutmut (as mutmut_config) only when a line filter is asked for
    env = dict(os.environ)
    if ranges:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HOOKS), env.get("PYTHONPATH")]))
        env["MUTATION_LINES"] = ",".join(f"{first}-{last}" for first, last in ranges)
    subprocess.run([str(Path(sys.executable).parent / "mutmut"), "run", "--paths-to-mutate", module,
                    "--runner", runner, "--tests-dir", "tests", "--no-progress", "--simple-output"],
                   cwd=ROOT, stdout=subprocess.DEVNULL, env=env)
    counts = counts_from_cache()
    killed, timeout = counts.get("ok_killed", 0), counts.get("bad_timeout", 0)
    survived, suspicious = counts.get("bad_survived", 0), counts.get("ok_suspicious", 0)
    skipped, untested = counts.get("skipped", 0), counts.get("untested", 0)
    total = sum(counts.values())
    detected = killed + timeout + suspicious
    score = detected / (detected + survived) if detected + survived else float("nan")
    for mutant_id in survivor_ids():
        print(subprocess.run([str(Path(sys.executable).parent / "mutmut"), "show", str(mutant_id)],
                             cwd=ROOT, capture_output=True, text=True).stdout)
    print(f"{module}: {total} mutants; killed {killed}, timed out {timeout} (counted as killed), "
          f"suspicious {suspicious} (counted as killed), survived {survived}, skipped {skipped}, "
          f"untested {untested}")
    print(f"mutation score {score:.1%} = (killed + timeouts) / (killed + timeouts + survived) "
          f"with tests: {' '.join(test_files)}")
    if ranges:
        print(f"only lines {', '.join(f'{first}-{last}' for first, last in ranges)} mutated (the rest skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
