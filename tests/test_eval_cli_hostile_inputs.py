"""Hostile input files for every ``python -m evaluation`` subcommand (issue #13, item 7): a FIFO, ``/dev/zero``, a
directory, a missing file, a 2 MiB line, a 1,000,000-character field, bytes that are not UTF-8, non-finite numbers.

Each is refused with one line ``error: FILE[:LINE]: reason`` on stderr and exit status 2, nothing on stdout,
without blocking (a SIGALRM guard turns a hang into a failure) and without a large allocation (tracemalloc peak,
as tests/test_import_hostile_inputs.py measures the importers).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluation.cli import main
from tests._hostile_support import dev_zero, directory, fifo, no_hang  # noqa: F401  (no_hang: autouse fixture)

REPO = Path(__file__).resolve().parent.parent
PEAK_LIMIT = 64 << 20  # bytes: the biggest hostile file here is 2 MiB

GOOD = {
    "qrels": "q1 0 d1 1\nq1 0 d2 0\n",
    "run": "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n",
    "ranks.tsv": "h\tr\tt\thead\t1\t10\nh\tr\tt\ttail\t2\t10\n",
    "train.txt": "h\tr\tt\nt\tr\th\n",
    "categories.tsv": "r\t1-1\n",
    "weights.tsv": "r\t1\n",
    "a.csv": "system,MRR\nA,0.1\nB,0.2\n",
    "b.csv": "system,MRR\nA,0.2\nB,0.1\n",
    "valid.tsv": "h\tr\tt\t0.9\t1\nh\tr\tu\t0.1\t0\n",
    "test.tsv": "h\tr\tv\t0.8\t1\nh\tr\tw\t0.2\t0\n",
}

# role: (file replaced by the hostile one, command line with {name} placeholders for the files)
ROLES: dict[str, tuple[str, list[str]]] = {
    "trec-qrels": ("qrels", ["trec", "{qrels}", "{run}"]),
    "trec-run": ("run", ["trec", "-q", "-m", "all_trec", "{qrels}", "{run}"]),
    "macro-run": ("run", ["macro", "{qrels}", "{run}"]),
    "micro-ranks": ("ranks.tsv", ["micro", "{ranks.tsv}"]),
    "micro-categories": ("categories.tsv", ["micro", "{ranks.tsv}", "--by", "category", "--categories",
                                            "{categories.tsv}"]),
    "micro-train": ("train.txt", ["micro", "{ranks.tsv}", "--by", "category", "--train", "{train.txt}"]),
    "micro-weights": ("weights.tsv", ["micro", "{ranks.tsv}", "--relation-weights", "{weights.tsv}"]),
    "probe-ranks": ("ranks.tsv", ["probe", "--ranks", "{ranks.tsv}", "--train", "{train.txt}"]),
    "probe-train": ("train.txt", ["probe", "--ranks", "{ranks.tsv}", "--train", "{train.txt}"]),
    "kendall-a": ("a.csv", ["kendall", "{a.csv}", "{b.csv}"]),
    "kendall-b": ("b.csv", ["kendall", "{a.csv}", "{b.csv}"]),
    "classify-valid": ("valid.tsv", ["classify", "{valid.tsv}", "{test.tsv}"]),
    "classify-test": ("test.tsv", ["classify", "--json", "{valid.tsv}", "{test.tsv}"]),
}


def not_a_file(build: Callable[[Path], Path], reason: str) -> Callable[[Path, str], tuple[str, str]]:
    """Builder of something that is not a regular file: refused as a whole, without a line."""
    def make(path: Path, good: str) -> tuple[str, str]:
        build(path)
        return "", reason

    return make


def missing(path: Path, good: str) -> tuple[str, str]:
    return "", "No such file or directory"


def long_line(path: Path, good: str) -> tuple[str, str]:
    path.write_text(good + "x" * (2 << 20))
    return f":{good.count(chr(10)) + 1}", "longer than"


def long_field(path: Path, good: str) -> tuple[str, str]:  # under the 1 MiB line limit: the field limit refuses it
    path.write_text(good + "d" * 1_000_000 + " 1\n")
    return f":{good.count(chr(10)) + 1}", "a field of 1,000,000 characters"


def not_utf8(path: Path, good: str) -> tuple[str, str]:
    path.write_bytes(good.encode() + b"\xff\xfe x\n")
    return f":{good.count(chr(10)) + 1}", "not valid UTF-8"


# name: builder(path, good content) -> (":LINE" the error names or "", reason it gives)
HOSTILE: dict[str, Callable[[Path, str], tuple[str, str]]] = {
    "fifo": not_a_file(fifo, "FIFO"), "dev-zero": not_a_file(dev_zero, "character device"),
    "directory": not_a_file(directory, "directory"),
    "missing": missing, "long-line": long_line, "long-field": long_field, "not-utf8": not_utf8,
}


def files(folder: Path) -> dict[str, Path]:
    paths = {name: folder / name for name in GOOD}
    for name, path in paths.items():
        path.write_text(GOOD[name])
    return paths


def command(template: list[str], paths: dict[str, Path]) -> list[str]:
    return [str(paths[arg[1:-1]]) if arg.startswith("{") else arg for arg in template]


def assert_refused(capsys, argv: list[str], named: str, reason: str) -> str:
    """``main(argv)``: exit status 2, one stderr line ``error: <named>...<reason>``, nothing printed, small peak."""
    capsys.readouterr()
    tracemalloc.start()
    try:
        status = main(argv)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out, err = capsys.readouterr()
    assert status == 2, (status, err)
    assert out == "" and err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"error: {named}"), (named, err)
    assert reason in err, (reason, err)
    assert peak < PEAK_LIMIT, f"peak allocation {peak / 2**20:.0f} MiB for {argv}"
    return err


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("role", ROLES)
def test_hostile_file_is_one_line(tmp_path, capsys, role, hostile):
    replaced, template = ROLES[role]
    paths = files(tmp_path)
    paths[replaced].unlink()
    where, reason = HOSTILE[hostile](paths[replaced], GOOD[replaced])
    assert_refused(capsys, command(template, paths), f"{paths[replaced]}{where}", reason)


@pytest.mark.parametrize("role, content, where", [
    ("micro-weights", "r\tinf\n", ":1"), ("micro-weights", "r\t1\ns\tnan\n", ":2"),
    ("micro-weights", "r\t-inf\n", ":1"), ("kendall-a", "system,MRR\nA,0.1\nB,inf\n", ":3"),
    ("kendall-b", "system,MRR\nA,nan\nB,0.1\n", ":2"), ("classify-valid", "h\tr\tt\t-inf\t1\n", ":1"),
    ("classify-test", "h\tr\tv\t0.8\t1\nh\tr\tw\tnan\t0\n", ":2"),
])
def test_non_finite_numbers_are_refused_with_their_line(tmp_path, capsys, role, content, where):
    replaced, template = ROLES[role]
    paths = files(tmp_path)
    paths[replaced].write_text(content)
    assert_refused(capsys, command(template, paths), f"{paths[replaced]}{where}", "not finite")


@pytest.mark.parametrize("relevance, line", [("3000000000", 2), ("99999999999999999999", 1), ("-1000001", 2),
                                             ("9223372036854775807", 2)])
def test_huge_relevance_levels_are_refused_with_their_line(tmp_path, capsys, relevance, line):
    """3,000,000,000 took all memory (a gain table per level, ``-m all_trec``); past int64 an OverflowError
    traceback (found from outside). +-1,000,000 itself is read."""
    paths = files(tmp_path)
    rows = ["q1 0 d1 1", f"q1 0 d2 {relevance}"] if line == 2 else [f"q1 0 d1 {relevance}", "q1 0 d2 0"]
    paths["qrels"].write_text("\n".join(rows) + "\n")
    assert_refused(capsys, ["trec", "-m", "all_trec", str(paths["qrels"]), str(paths["run"])],
                   f"{paths['qrels']}:{line}", f"relevance {relevance} is beyond +-1,000,000")
    paths["qrels"].write_text("q1 0 d1 1000000\nq1 0 d2 -1000000\n")
    assert main(["trec", "-m", "ndcg", str(paths["qrels"]), str(paths["run"])]) == 0
    assert capsys.readouterr().out.split() == ["ndcg", "all", "1.0000"]


def test_a_max_retrieved_past_a_long_is_no_limit(tmp_path, capsys):
    """``-M 99999999999999999999``: C's atol clamps to the largest long (an OverflowError traceback before)."""
    paths = files(tmp_path)
    assert main(["trec", "-M", "9" * 20, "-m", "num_ret", str(paths["qrels"]), str(paths["run"])]) == 0
    assert capsys.readouterr().out.split() == ["num_ret", "all", "2"]


def test_standard_input_without_line_ends_is_refused(tmp_path, capsys, monkeypatch):
    """``trec QRELS -`` with /dev/zero on standard input: refused once the first line passes 1 MiB."""
    paths = files(tmp_path)
    with open("/dev/zero", "rb") as zero:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(zero))
        assert_refused(capsys, ["trec", str(paths["qrels"]), "-"], "<stdin>:1", "line of more than 1,048,576 bytes")


@pytest.mark.parametrize("hits", ["99999999999", "²", "1,-3", "9" * 5000])
def test_hits_out_of_range(tmp_path, capsys, hits):
    paths = files(tmp_path)
    assert_refused(capsys, ["micro", str(paths["ranks.tsv"]), "--hits", hits], "--hits must be", "positive integers")


def test_wide_tables_are_not_taken_for_long_fields(tmp_path, capsys):
    """A CSV line longer than the field limit is fine when its cells are short: cells end at commas."""
    metrics = [f"metric{i:04d}" for i in range(500)]  # a header line of 5,500 characters without a space
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system," + ",".join(metrics) + "\n" + "".join(f"S{s}," + ",".join(["0.5"] * 499 + [str(s)]) + "\n"
                                                                for s in range(3)))
    b.write_text(a.read_text())
    assert main(["kendall", str(a), str(b)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "metric0499\t1"


def test_on_the_command_line(tmp_path):
    """`python -m evaluation trec` on a FIFO: exit status 2 and one line at once; neither Django nor torch loaded."""
    paths = files(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    script = (
        "import sys\n"
        "from evaluation.cli import main\n"
        "codes = [main(['trec', sys.argv[1], sys.argv[2]]), main(['micro', sys.argv[3]]),"
        " main(['trec', sys.argv[1], sys.argv[4]])]\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'torch'))\n"
        "print(codes, heavy)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", script, str(paths["qrels"]), str(paths["run"]),
                           str(paths["ranks.tsv"]), str(tmp_path / "pipe")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "[0, 0, 2] []", done.stdout + done.stderr
    assert done.stderr == f"error: {tmp_path / 'pipe'}: cannot read file: is a FIFO (named pipe), not a regular file\n"


def test_ctrl_c_is_one_line_and_exit_status_130(tmp_path, capsys, monkeypatch):
    """Found from outside: Ctrl-C while `trec` read its files printed a KeyboardInterrupt traceback from pandas."""
    from evaluation import cli_trec

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_trec, "read_qrels", interrupted)
    paths = files(tmp_path)
    assert main(["trec", "-m", "map", str(paths["qrels"]), str(paths["run"])]) == 130
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "error: interrupted\n")


def test_an_empty_train_file_is_refused_by_probe(tmp_path, capsys):
    """It was taken without a word: every answer's popularity 0 (found from outside)."""
    replaced, template = ROLES["probe-train"]
    paths = files(tmp_path)
    paths[replaced].write_text("\n")
    assert_refused(capsys, command(template, paths), str(paths[replaced]),
                   "no train triples: PROBE weighs each answer by its popularity in train")


@pytest.mark.parametrize("option", [["--beta", "1e308"], ["--beta=-1e308"], ["--alpha", "1e308"]])
def test_probe_parameters_out_of_range_are_one_line(tmp_path, capsys, option):
    """numpy's overflow warnings and "nan" with exit status 0 before (found from outside)."""
    paths = files(tmp_path)
    status = main(command(ROLES["probe-train"][1], paths) + option)
    out, err = capsys.readouterr()
    assert (status, out) == (2, "") and err.count("\n") == 1 and err.startswith("error: PROBE is not a finite number")
    assert main(command(ROLES["probe-train"][1], paths) + [option[0].split("=")[0], "0.5"]) == 0  # a usual value
