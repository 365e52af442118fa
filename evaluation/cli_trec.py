"""``python -m evaluation trec``: trec_eval's command line (trec_eval 10), and ``macro`` (kgpool's measures).

``python -m evaluation trec -q -m map qrels run`` takes what ``trec_eval -q -m map qrels run`` takes and
prints the same lines: ``measure<TAB>qid<TAB>value`` with the name left-justified to 22 characters,
values with 4 decimals (integers for the counts), per query with ``-q`` (queries in qid string order,
measures in trec_eval's order), then the ``all`` summary. Options as trec_eval's getopt reads them
(``-qc``, ``-l2``, ``-mmap``, ``--measure=map``, options after the files):

    -q  per-query values        -m MEASURE[.PARAMS]  (repeatable; nicknames official, all_trec, set)
    -c  average over all qrels queries (missing ones are evaluated as an empty ranking)
    -n  no summary              -l N  lowest relevant value (default 1)
    -J  judged documents only   -M N  first N documents of each ranking    -N N  collection size (utility)
    -R qrels, -T trec_results   (the only formats read), -D N (ignored), -h, -v
    RUN may be ``-`` (standard input).

kgpool extensions: ``-m`` may be followed by more measure names (``-m map P_10 bpref``; the two words
left over are QRELS and RUN) and single cut-off names such as ``P_10`` add up.

Exit status as trec_eval's: 0; 1 for a usage error; 2 for an unreadable or malformed file (one line
``error: FILE:LINE: message``), an unknown measure (trec_eval: 1), bad measure parameters or an
unsupported option; 7 when no query is in both files. Not supported: ``-R prefs|qrels_prefs|qrels_jg``
and the preference measures, ``-Z``, ``-l`` below 0.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, TextIO

import numpy as np

from evaluation.core import measure_names
from evaluation.core.measure_names import UnknownMeasureError, atol
from evaluation.core.trec import TrecFormatError, read_qrels, read_run
from evaluation.core.trec_eval import NoQueriesError, TrecEvalOptions, TrecEvalResult, trec_eval
from pooling.engine import userfiles

VERSION = "10.0 (kgpool: python -m evaluation trec)"
#: kgpool's macro measures (pool depth 10 in the published campaign).
DEFAULT_MACRO_MEASURES: tuple[str, ...] = (
    "num_q", "recip_rank", "success.1,3,10", "map_cut.10", "ndcg_cut.10", "P.10", "bpref", "infAP",
)
DEFAULTS = {"trec": ("official",), "macro": DEFAULT_MACRO_MEASURES}

USAGE = """Usage: python -m evaluation trec [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all measures, '-m official' is default)
"""
_FLAGS = set("hvqcnJo")
_WITH_VALUE = set("mlDNMRTZ")
_LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m", "complete_rel_info_wanted": "c",
         "level_for_rel": "l", "nosummary": "n", "Debug_level": "D", "Judged_docs_only": "J",
         "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M", "Rel_info_format": "R",
         "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z"}


class UsageError(ValueError):
    """A command line trec_eval would refuse with its usage message (exit status 1)."""


class UnsupportedError(ValueError):
    """An option value trec_eval may take but this implementation does not (exit status 2, as trec_eval's
    unknown formats)."""


@dataclass
class TrecArguments:
    qrels: str = ""
    run: str = ""
    measures: list[str] = field(default_factory=list)
    per_query: bool = False
    summary: bool = True
    help: bool = False
    version: bool = False
    options: TrecEvalOptions = TrecEvalOptions()


def parse_arguments(argv: Sequence[str]) -> TrecArguments:
    """trec_eval's options (GNU getopt_long rules) and the two files. Raises UsageError."""
    options: list[tuple[int, str, str | None]] = []  # (position, option letter, value)
    words: list[tuple[int, str, bool]] = []  # (position, word, follows an -m value)
    after_measure = False
    position, argv = 0, list(argv)
    while position < len(argv):
        arg, start = argv[position], position
        if arg == "--":
            words += [(position + 1 + k, word, False) for k, word in enumerate(argv[position + 1:])]
            break
        if arg.startswith("--"):
            name, equals, value = arg[2:].partition("=")
            matches = [long for long in _LONG if long == name] or [long for long in _LONG if long.startswith(name)]
            if len(matches) != 1:
                raise UsageError(f"unrecognized option '{arg}'")
            letter = _LONG[matches[0]]
            if letter in _WITH_VALUE and not equals:
                if position + 1 >= len(argv):
                    raise UsageError(f"option '{arg}' requires an argument")
                position += 1
                value = argv[position]
            elif letter not in _WITH_VALUE and equals:
                raise UsageError(f"option '--{matches[0]}' doesn't allow an argument")
            options.append((start, letter, value if letter in _WITH_VALUE else None))
        elif arg.startswith("-") and arg != "-":
            for index, letter in enumerate(arg[1:], start=1):
                if letter in _FLAGS:
                    options.append((start, letter, None))
                    continue
                if letter not in _WITH_VALUE:
                    raise UsageError(f"invalid option -- '{letter}'")
                value = arg[index + 1:]
                if not value:
                    if position + 1 >= len(argv):
                        raise UsageError(f"option requires an argument -- '{letter}'")
                    position += 1
                    value = argv[position]
                options.append((start, letter, value))
                break
        else:
            words.append((position, arg, after_measure))
            position += 1
            continue
        after_measure = options[-1][1] == "m"
        position += 1
    return _arguments(options, words)


def _arguments(options: list[tuple[int, str, str | None]], words: list[tuple[int, str, bool]]) -> TrecArguments:
    args = TrecArguments()
    settings: dict[str, object] = {}
    for _, letter, value in options:
        if letter == "h":
            args.help = True
        elif letter == "v":
            args.version = True
        elif letter == "q":
            args.per_query = True
        elif letter == "n":
            args.summary = False
        elif letter == "c":
            settings["complete"] = True
        elif letter == "J":
            settings["judged_only"] = True
        elif letter == "l":
            settings["relevance_level"] = atol(value)
            if settings["relevance_level"] < 0:
                raise UnsupportedError(f"-l {value}: relevance levels below 0 are not supported")
        elif letter == "M":
            settings["max_retrieved"] = max(atol(value), 0)
        elif letter == "N":
            settings["num_docs_in_collection"] = atol(value)
        elif letter == "R" and value != "qrels":
            raise UnsupportedError(f"rel_info format '{value}' is not supported (only 'qrels'; the preference "
                                   "formats are not)")
        elif letter == "T" and value != "trec_results":
            raise UnsupportedError(f"results format '{value}' is not supported (only 'trec_results')")
        elif letter == "Z":
            raise UnsupportedError("-Z (z-scores) is not supported")
        # -m is read below; -D (debug level) and -o (obsolete) are accepted and ignored, as trec_eval 10 does
    args.options = TrecEvalOptions(**settings)
    if args.help or args.version:
        return args
    files = [(p, w) for p, w, after in words if not after]
    continued = [(p, w) for p, w, after in words if after]  # after an -m value: measures, or the files at the end
    need = max(2 - len(files), 0)
    if need:
        files, continued = files + continued[-need:], continued[:-need]
    if len(files) != 2:
        raise UsageError("expected exactly two files: trec_rel_file trec_top_file")
    args.qrels, args.run = (word for _, word in sorted(files))
    measures = [(p, value) for p, letter, value in options if letter == "m"] + continued
    args.measures = [word for _, word in sorted(measures)]
    return args


# ---------------------------------------------------------------------- output
def _number(value: float) -> str:
    if math.isnan(value):  # C's printf shows the sign of a NaN (0.0 / 0.0 is -nan on x86)
        return f"{'-nan' if np.signbit(value) else 'nan':>6}"
    return f"{value:6.4f}"


def _line(name: str, qid: str, text: str) -> str:
    return f"{name:<22}\t{qid}\t{text}\n"


def format_result(result: TrecEvalResult, *, per_query: bool, summary: bool) -> str:
    """trec_eval's lines for ``result``: per query (when asked) then the summary."""
    lines: list[str] = []
    if per_query:
        shown = [m for m in result.measures if m.base not in measure_names.SUMMARY_ONLY]
        for index, qid in enumerate(result.query_ids):
            for measure in shown:
                value = result.per_query[measure.name][index]
                if measure.base == "relstring":
                    lines.append(_line(measure.name, qid, f"'{value}'"))
                elif measure.kind == "long":
                    lines.append(_line(measure.name, qid, str(int(value))))
                else:
                    lines.append(_line(measure.name, qid, _number(value)))
    if summary:
        for measure in result.measures:
            if measure.base == "relstring":
                continue
            value = result.summary[measure.name]
            if measure.base == "runid":
                lines.append(_line(measure.name, "all", str(value)))
            elif measure.kind == "long":
                lines.append(_line(measure.name, "all", str(int(value))))
            else:
                lines.append(_line(measure.name, "all", _number(value)))
    return "".join(lines)


# ---------------------------------------------------------------------- command
def _read_stdin(stream) -> bytes:
    try:
        return userfiles.read_stream(stream, "<stdin>")
    except userfiles.UserFileError as error:
        raise TrecFormatError("<stdin>", error.line, error.message) from None


def _read_input(path: str, reader, stdin: bytes | None):
    if path == "-":
        return reader(Path("<stdin>"), stdin)
    return reader(path)


def run(command: str, argv: Sequence[str], out: TextIO, err: TextIO, stdin=None) -> int:
    """Run ``trec`` / ``macro`` with ``argv`` (what follows the command); returns the exit status."""
    try:
        args = parse_arguments(argv)
    except UsageError as error:
        err.write(f"error: {error}\n{USAGE}")
        return 1
    except UnsupportedError as error:
        err.write(f"error: {error}\n")
        return 2
    if args.version:
        err.write(f"trec_eval version {VERSION}\n")
        return 0
    if args.help:
        out.write(__doc__ + "\n" + USAGE)
        return 0
    try:
        measures = measure_names.request(args.measures or DEFAULTS[command])
        if args.qrels == "-" and args.run == "-":
            raise UsageError("only one of the two files can be '-' (standard input)")
        data = _read_stdin(stdin or sys.stdin.buffer) if "-" in (args.qrels, args.run) else None
        qrels = _read_input(args.qrels, read_qrels, data)
        results = _read_input(args.run, read_run, data)
        for path, content in ((args.qrels, qrels), (args.run, results)):
            if len(content) == 0:
                raise TrecFormatError("<stdin>" if path == "-" else path, None, "no lines to evaluate")
        result = trec_eval(qrels, results, measures, args.options)
    except UsageError as error:
        err.write(f"error: {error}\n{USAGE}")
        return 1
    except (TrecFormatError, UnknownMeasureError) as error:
        err.write(f"error: {error}\n")
        return 2
    except NoQueriesError as error:
        run_name = "<stdin>" if args.run == "-" else args.run
        err.write(f"error: {run_name}: {error} (qrels: {args.qrels}; -c evaluates every qrels query)\n")
        return 7
    out.write(format_result(result, per_query=args.per_query, summary=args.summary))
    return 0


def main(command: str, argv: Sequence[str]) -> int:
    try:
        return run(command, argv, sys.stdout, sys.stderr)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
