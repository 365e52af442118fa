"""Property-based: random and truncated files for the pool, run and judgments importers and the evaluation
command-line inputs give the importer's own error naming the file (and a line that exists), or a consistent
result — never another exception type, and a refused import writes nothing. Hypothesis examples of one test
share one test transaction: an accepted example's rows stay, so "nothing written" compares with the state just
before the example."""
from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests._annotation_support import write_kg
from tests._pool_support import storage  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
ENTITIES = [f"e{i}" for i in range(8)]
TRAIN = [("e0", "r", "e1"), ("e1", "r", "e2"), ("e2", "s", "e3"), ("e3", "r", "e4"), ("e4", "s", "e5"),
         ("e5", "r", "e6"), ("e6", "s", "e7"), ("e7", "r", "e0")]
VALID = [("e0", "s", "e2")]
TEST = [("e1", "r", "e3"), ("e2", "r", "e5"), ("e4", "s", "e6")]
QIDS = [f"{side}{n}" for side in ("head", "tail") for n in range(6)]
ODD = ["", "-", "#", "# c", "0", "1", "2", "3", "-1", "1.5", "nan", "NaN", "inf", "-inf", "1e400", "1e3", "x",
       "é", "\x00", "\x0b", "\x1c", "\x85", "\u2028", "\ufeff", "\r", "Q0", "Y", "N", "y", "sys-a", "sys-b",
       "Sys A", "sys-a,sys-b", "sys-a,sys-a", "head", "tail", "side", "r,s",
       # the hostile values of issue #13 (test_import_hostile_inputs.py has one case per importer)
       "\u00b2", "\u0663", "99999999999999999999", "1_0", "k" * 300, "s" * 101, "../x y", "+inf", "Infinity"]
tokens = st.sampled_from(ENTITIES + ["r", "s", "t"] + QIDS + ODD)
separators = st.sampled_from(["\t", " ", "  ", "\t\t", " \t"])


@st.composite
def line_files(draw, max_lines: int = 8) -> bytes:
    """Dataset-like text: lines of tokens joined by tabs / spaces, with odd line ends."""
    lines = draw(st.lists(st.lists(tokens, max_size=7).map(lambda fields: draw(separators).join(fields)),
                          max_size=max_lines))
    end = draw(st.sampled_from(["\n", "\r\n", "\n\n", "\r"]))
    return (end.join(lines) + draw(st.sampled_from(["", end]))).encode("utf-8")


def contents(valid: list[str]) -> st.SearchStrategy[bytes]:
    """Random token lines, random bytes, and valid files truncated or with one line replaced."""
    data = "\n".join(valid).encode()
    truncated = st.floats(0, 1).map(lambda cut: data[: int(len(data) * cut)])
    spliced = st.tuples(st.integers(0, len(valid) - 1), line_files(1)).map(
        lambda pair: "\n".join(valid[: pair[0]] + [pair[1].decode()] + valid[pair[0] + 1:]).encode())
    return st.one_of(line_files(), st.binary(max_size=80), truncated, spliced)


def _write(content: bytes, name: str = "file.txt") -> Path:
    path = Path(tempfile.mkdtemp(prefix="kgpool-fuzz-")) / name
    path.write_bytes(content)
    return path


def _assert_names_file(message: str, path: Path) -> None:
    """The error starts with the file; a line number, when given, is a line of the file (lines end with \\n,
    \\r\\n or \\r, as an editor shows them)."""
    assert message.startswith(str(path)), message
    match = re.match(re.escape(str(path)) + r":(\d+):", message)
    if match:
        num_lines = len(re.split(rb"\r\n|\r|\n", path.read_bytes()))
        assert 1 <= int(match.group(1)) <= num_lines, (message, path.read_bytes())


@pytest.fixture
def kg(tmp_path, storage):
    from pooling.services.kg_import import import_kg

    return import_kg("fz", write_kg(tmp_path / "fz", TRAIN, VALID, TEST))


def _pool_state() -> tuple:
    from pooling.models import Pool, PoolEntry, PoolHit, Sample, SampleTriple, System

    return (list(Pool.objects.order_by("pk").values_list("pk", "name", "depth")), PoolEntry.objects.count(),
            PoolHit.objects.count(), list(Sample.objects.order_by("pk").values_list("pk", "name")),
            SampleTriple.objects.count(), list(System.objects.order_by("pk").values_list("pk", "name")))


FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
VALID_POOL = ["e1\tr\te5\t1\tsys-a", "e1\tr\te6\t2\tsys-a,sys-b", "e0\tr\te3\t-\t-", "e2\tr\te4", "e4\ts\te0\t3"]
VALID_SAMPLE = ["0", "1", "2"]


def _check_import_pool(kg, pool_file: Path, sample_file: Path, name: str) -> None:
    from pooling.models import PoolEntry, PoolHit
    from pooling.services.pools import PoolError, import_pool

    before = _pool_state()
    try:
        pool, counts = import_pool(kg, pool_file, sample_file, name=name, sample_name="fz-" + name)
    except PoolError as error:
        message = str(error)
        _assert_names_file(message, pool_file if message.startswith(str(pool_file)) else sample_file)
        assert _pool_state() == before
    else:
        assert pool.entries.count() == counts["entries"] > 0
        assert PoolHit.objects.filter(entry__pool=pool).count() == counts["hits"]
        triples = list(PoolEntry.objects.filter(pool=pool).values_list("head_id", "relation_id", "tail_id"))
        assert len(triples) == len(set(triples))
        assert pool.depth >= 1


@pytest.mark.django_db
@FUZZ
@given(content=contents(VALID_POOL))
@example(content=b"e1\tr\te5\t1\tsys-a,sys-a\ne2\tr\te4\tsys-b,sys-a,sys-b\n")
@example(content="e1\tr\te5\x1cbad\nzz\n".encode())
def test_import_pool_random_pool_files(kg, content):
    global_counter = test_import_pool_random_pool_files.__dict__.setdefault("n", [0])
    global_counter[0] += 1
    _check_import_pool(kg, _write(content, "pool.tsv"), _write("\n".join(VALID_SAMPLE).encode(), "sample.txt"),
                       f"p{global_counter[0]}")


@pytest.mark.django_db
@settings(FUZZ, max_examples=40)
@given(content=contents(VALID_SAMPLE + ["e1 r e3"]))
def test_import_pool_random_sample_files(kg, content):
    counter = test_import_pool_random_sample_files.__dict__.setdefault("n", [0])
    counter[0] += 1
    _check_import_pool(kg, _write("\n".join(VALID_POOL).encode(), "pool.tsv"), _write(content, "sample.txt"),
                       f"s{counter[0]}")


VALID_RUN = [f"{q} Q0 {e} {rank} {10 - rank}.5 fz" for q in ("head0", "tail1", "head2")
             for rank, e in enumerate(ENTITIES[:3], start=1)]


@pytest.mark.django_db
@settings(FUZZ, max_examples=40)
@given(content=contents(VALID_RUN))
def test_import_run_random_run_files(kg, content):
    from pooling.models import Ranking, Sample, System
    from pooling.services.rankings import RunImportError, import_run
    from pooling.services.samples import create_sample
    from pooling.storage import storage_path

    sample = Sample.objects.filter(kg=kg, name="all").first() or create_sample(
        kg, name="all", method="file", seed=None, indices=[0, 1, 2])
    counter = test_import_run_random_run_files.__dict__.setdefault("n", [0])
    counter[0] += 1
    path = _write(content, "x.run")
    before = (list(System.objects.values_list("pk", flat=True)), Ranking.objects.count(),
              sorted(p.name for p in storage_path("rankings").rglob("*")) if storage_path("rankings").exists() else [])
    try:
        system = import_run(sample, path, name=f"run{counter[0]}")
    except RunImportError as error:
        _assert_names_file(str(error), path)
        after = (list(System.objects.values_list("pk", flat=True)), Ranking.objects.count(),
                 sorted(p.name for p in storage_path("rankings").rglob("*")) if storage_path("rankings").exists() else [])
        assert after == before
    else:
        from pooling.selectors.pools import ranking_result

        result = ranking_result(Ranking.objects.get(system=system))
        assert result.topk_entities.shape[0] == sample.questions.count()
        assert ((result.topk_entities >= -1) & (result.topk_entities < kg.num_entities)).all()


# ------------------------------------------------------------------------------------ evaluation inputs
VALID_QRELS = ["q1 0 d1 1", "q1 0 d2 0", "q2 0 d1 2", "007 0 d3 1"]
VALID_TREC_RUN = ["q1 Q0 d1 1 2.5 tag", "q1 Q0 d3 2 1 tag", "q2 Q0 d2 1 0.5 tag", "007 Q0 d3 1 -1e3 tag"]
VALID_RANKS = ["head\trelation\ttail\tside\trank\tnum_candidates", "e1\tr\te3\thead\t1\t10",
               "e1\tr\te3\ttail\t2.5\t10", "e2\ts\te5\ttail\t7\t7"]
trec_tokens = st.sampled_from(["q1", "q2", "007", "7", "0", "Q0", "d1", "d2", "d3", "1", "2", "-1", "2.5", "1e3",
                               "nan", "inf", "-inf", "tag", "#", "", "é", "\x00", "\x0b", "\x1c", "\xa0", "1_0"])


@st.composite
def trec_files(draw, valid: list[str]) -> bytes:
    lines = draw(st.lists(st.lists(trec_tokens, min_size=3, max_size=7).map(lambda f: draw(separators).join(f)),
                          max_size=6))
    return draw(st.one_of(st.just(("\n".join(lines) + "\n").encode()), contents(valid)))


def _same_table(fast, slow) -> None:
    for column in ("query_names", "doc_names", "query", "doc"):
        assert np.array_equal(getattr(fast, column), getattr(slow, column)), column


@settings(max_examples=150, deadline=None)
@given(qrels=trec_files(VALID_QRELS), run=trec_files(VALID_TREC_RUN))
def test_trec_readers_and_the_fast_path_agree_with_the_line_scan(qrels, run):
    """read_qrels / read_run (pandas fast path) give exactly what the line-by-line reader gives, or its error."""
    from evaluation.core.trec import TrecFormatError, _scan_qrels, _scan_run, judged_ranking_from_trec, read_qrels, read_run

    outcomes = []
    for content, read, scan, value in ((qrels, read_qrels, _scan_qrels, "relevance"), (run, read_run, _scan_run, "score")):
        path = _write(content)
        try:
            slow = scan(path, content)
        except TrecFormatError as error:
            _assert_names_file(str(error), path)
            slow = error
        try:
            fast = read(path)
        except TrecFormatError as error:
            _assert_names_file(str(error), path)
            assert isinstance(slow, TrecFormatError) and str(slow) == str(error)
            outcomes.append(None)
            continue
        assert not isinstance(slow, TrecFormatError), f"fast path accepted what the scan refuses: {slow}"
        _same_table(fast, slow)
        assert np.array_equal(getattr(fast, value), getattr(slow, value), equal_nan=value == "score")
        if value == "score":
            assert fast.tag == slow.tag and not fast.has_duplicates()
        outcomes.append(fast)
    if all(outcome is not None for outcome in outcomes):
        judged_ranking_from_trec(*outcomes, complete=True)  # any accepted pair evaluates


@settings(max_examples=120, deadline=None)
@given(content=contents(VALID_RANKS), kind=st.sampled_from(["ranks", "triples", "two", "table"]))
def test_evaluation_input_readers(content, kind):
    from evaluation.inputs import InputError, read_metric_table, read_ranks, read_triples, read_two_columns

    path = _write(content)
    try:
        if kind == "ranks":
            ranks = read_ranks(path)
            assert len(ranks) > 0 and ((1 <= ranks.rank) & (ranks.rank <= ranks.num_candidates)).all()
            assert set(ranks.side.tolist()) <= {0, 1}
        elif kind == "triples":
            assert all(len(t) == 3 for t in read_triples(path))
        elif kind == "two":
            read_two_columns(path, "weight", float)
        else:
            read_metric_table(path)
    except InputError as error:  # a lone \r in a table used to escape as _csv.Error (fixed in evaluation/inputs.py)
        _assert_names_file(str(error), path)


@settings(max_examples=60, deadline=None)
@given(qrels=trec_files(VALID_QRELS), run=trec_files(VALID_TREC_RUN), ranks=contents(VALID_RANKS),
       command=st.sampled_from(["trec", "macro", "micro"]))
def test_evaluation_cli_in_process(qrels, run, ranks, command):
    """``python -m evaluation``: exit status 0 with output, or 2 with one ``error: FILE...`` line."""
    from evaluation.cli import main

    paths = [_write(qrels), _write(run)] if command != "micro" else [_write(ranks)]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main([command, *map(str, paths), *(["--by", "side", "--by", "relation"] if command == "micro" else ["-q"])])
    if status == 0:
        assert out.getvalue().strip() and not err.getvalue()
    else:  # 7: trec_eval's status when no query is in both files
        assert status in (2, 7) and err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: "), err.getvalue()
        message = err.getvalue()[len("error: "):].strip()
        _assert_names_file(message, next(p for p in paths if message.startswith(str(p))))


@pytest.mark.parametrize("qrels, run", [  # (a nan score is fine: trec_eval reads it)
    (b"q1 0 d1 x\n", b"q1 Q0 d1 1 1 tag\n"),
    (b"q1 0 d1 1\nq1 0 d1", b"q1 Q0 d1 1 1 tag\n"),
    (b"\xff\xfe", b"q1 Q0 d1 1 1 tag\n"),
    (b"q1 0 d1 1\n", b"q1 Q0 d1 1 1 tag\nq1 Q0 d1 2 0 tag\n"),
])
def test_evaluation_cli_subprocess_bad_files(qrels, run):
    qrels_path, run_path = _write(qrels), _write(run)
    done = subprocess.run([sys.executable, "-m", "evaluation", "trec", str(qrels_path), str(run_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert re.fullmatch(r"error: (" + re.escape(str(qrels_path)) + "|" + re.escape(str(run_path)) + r"):\d+: .+\n",
                        done.stderr), done.stderr


# ------------------------------------------------------------------------------------ judgments importer
@pytest.fixture
def campaign(tmp_path, storage):
    from tests._annotation_support import star_campaign

    return star_campaign(tmp_path, items=4)


def _judgment_lines(campaign) -> list[str]:
    from annotation.models import Item

    rows = Item.objects.filter(campaign=campaign).values_list("head__key", "relation__key", "tail__key")
    return [f"{h}\t{r}\t{t}\t{'Y' if i % 2 else 'N'}" for i, (h, r, t) in enumerate(rows)] + ["e0\tlikes\te1\tY"]


@pytest.mark.django_db
@settings(FUZZ, max_examples=50)
@given(data=st.data(), strict=st.booleans())
def test_import_judgments_random_files(campaign, data, strict):
    from annotation.models import Item
    from annotation.services.errors import AnnotationError
    from annotation.services.imports import import_judgments

    valid = _judgment_lines(campaign)
    content = data.draw(st.one_of(contents(valid), line_files().map(
        lambda b: b.replace(b"e1", b"e1").replace(b"r\t", b"likes\t"))))
    path = _write(content, "labels.tsv")

    def state():
        return list(Item.objects.filter(campaign=campaign).order_by("pk").values_list("pk", "status", "label", "label_origin"))

    before = state()
    try:
        report = import_judgments(campaign, path, strict=strict)
    except AnnotationError as error:
        _assert_names_file(str(error), path)
        assert state() == before
    else:
        assert report.labelled + report.sample + report.kept + len(report.unknown) <= report.lines
        assert not (strict and report.unknown)
        imported = Item.objects.filter(campaign=campaign, status=Item.Status.IMPORTED)
        assert imported.count() >= report.labelled
        assert all(label in ("Y", "N") for label in imported.values_list("label", flat=True))


# ------------------------------------------------------------------------------------ regressions found by fuzzing
@pytest.mark.django_db
@pytest.mark.parametrize("importer", ["pool", "sample", "judgments"])
def test_error_line_numbers_count_line_ends_only(importer, kg, tmp_path):
    """\\x1c, \\x85, \\u2028 ... are not line ends (str.splitlines() treats them as such): the error names line 1."""
    from annotation.services.errors import AnnotationError
    from pooling.services.pools import PoolError, import_pool

    bad = "e1\tr\te5\x1cbad\nzz zz zz zz zz zz\n".encode()
    if importer == "judgments":
        from tests._annotation_support import star_campaign

        from annotation.services.imports import import_judgments

        path = _write("e0\tlikes\te2\tY\x1czz\nzz\n".encode(), "labels.tsv")
        with pytest.raises(AnnotationError, match=re.escape(f"{path}:1: ")):
            import_judgments(star_campaign(tmp_path, items=2), path)
        return
    sample = _write(("0\n1\n2\n" if importer == "pool" else "0\x1c1\n5\n").encode(), "sample.txt")
    pool = _write(bad if importer == "pool" else b"e1\tr\te5\n", "pool.tsv")
    path = pool if importer == "pool" else sample
    with pytest.raises(PoolError, match=re.escape(f"{path}:1: ")):
        import_pool(kg, pool, sample, name="lines", sample_name="lines")


@pytest.mark.django_db
def test_import_pool_counts_a_system_listed_twice_once(kg):
    from pooling.models import PoolHit
    from pooling.services.pools import import_pool

    pool, counts = import_pool(kg, _write(b"e1\tr\te5\t1\tsys-a,sys-a\n", "pool.tsv"), _write(b"0\n1\n2\n"),
                               name="twice", sample_name="twice")
    assert counts["hits"] == PoolHit.objects.filter(entry__pool=pool).count() == 2
    assert list(pool.systems.values_list("name", flat=True)) == ["sys-a"]


@pytest.mark.django_db
@pytest.mark.parametrize("line", [b"\x00\n", b"e\x000\tlikes\te1\tY\n", b"e0\tlikes\te1\x00\tN\n"])
def test_a_nul_byte_in_a_judgments_file_is_a_file_error_not_a_database_error(campaign, line):
    """Found by the fuzzer on PostgreSQL once label imports looked up only the keys a file names (issue 18): the
    NUL byte reached the database's IN list, which PostgreSQL refuses."""
    from annotation.models import Item
    from annotation.services.errors import AnnotationError
    from annotation.services.imports import import_judgments

    path = _write(line, "labels.tsv")
    before = list(Item.objects.filter(campaign=campaign).values_list("pk", "status", "label"))
    try:
        report = import_judgments(campaign, path, strict=True)
    except AnnotationError as error:
        _assert_names_file(str(error), path)
    else:
        assert report.labelled == 0
    assert list(Item.objects.filter(campaign=campaign).values_list("pk", "status", "label")) == before
