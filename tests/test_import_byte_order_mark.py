"""A UTF-8 byte order mark (Windows editors write one) is no part of a file's first field, in every reader of
user files (found from outside): trec's line scanner kept it (a CRLF or commented qrels file with one lost its
first judgment: map 0.3333 instead of 0.8333, silently), import_judgments dropped the first label as an unknown
triple, and the sample and pool files and evaluate --labels refused a legal file."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evaluation.core.trec import read_qrels, read_run
from pooling.engine import userfiles
from tests.test_import_hostile_inputs import world  # noqa: F401  (KG fz, sample all, system ext, campaign star)
from tests._pool_support import storage  # noqa: F401

BOM = b"\xef\xbb\xbf"
QRELS = b"q1 0 d1 1\nq1 0 d3 1\n"
RUN = b"q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d4 1 5.0 r\n"


def _variants(data: bytes) -> dict[str, bytes]:
    """The file as written, with CRLF line ends (the line scanner's case), with a comment line (the same)."""
    return {"plain": data, "crlf": data.replace(b"\n", b"\r\n"), "comment": b"# judged by hand\n" + data}


@pytest.mark.parametrize("variant", ["plain", "crlf", "comment"])
def test_trec_files_read_the_same_with_a_byte_order_mark(tmp_path, variant):
    qrels, run = _variants(QRELS)[variant], _variants(RUN)[variant]
    expected_qrels, expected_run = read_qrels("q", QRELS), read_run("r", RUN)
    for data, read, expected in ((qrels, read_qrels, expected_qrels), (run, read_run, expected_run)):
        got = read(tmp_path / "f", BOM + data)
        assert list(got.query_names) == list(expected.query_names) == sorted({"q1", "q2"} & set(got.query_names))
        assert list(got.doc_names) == list(expected.doc_names)


def test_the_trec_command_gives_the_same_numbers(tmp_path, capsys):
    from evaluation.cli import main

    (tmp_path / "q.txt").write_bytes(BOM + QRELS.replace(b"\n", b"\r\n"))
    (tmp_path / "r.txt").write_bytes(BOM + RUN.replace(b"\n", b"\r\n"))
    (tmp_path / "q0.txt").write_bytes(QRELS)
    (tmp_path / "r0.txt").write_bytes(RUN)
    outputs = []
    for qrels, run in (("q.txt", "r.txt"), ("q0.txt", "r0.txt")):
        assert main(["trec", "-m", "map", "-m", "num_rel", str(tmp_path / qrels), str(tmp_path / run)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and "0.8333" in outputs[0]


def test_read_text_leaves_the_mark_out(tmp_path):
    (tmp_path / "a.tsv").write_bytes(BOM + b"x\ty\r\nz\n")
    assert userfiles.read_text(tmp_path / "a.tsv", universal_newlines=True) == "x\ty\nz\n"


@pytest.mark.django_db
def test_import_judgments_applies_the_first_label(world):  # noqa: F811
    from annotation.models import Item

    items = Item.objects.filter(campaign__name="star").order_by("pk")
    h, r, t = items.values_list("head__key", "relation__key", "tail__key")[0]
    (world / "labels.tsv").write_bytes(BOM + f"{h}\t{r}\t{t}\tN\n".encode())
    out = io.StringIO()
    call_command("import_judgments", "star", str(world / "labels.tsv"), stdout=out)
    assert items.first().label == "N", out.getvalue()


@pytest.mark.django_db
def test_sample_and_pool_files_with_the_mark(world, storage):  # noqa: F811
    from pooling.models import Pool, Sample

    (world / "s.txt").write_bytes(BOM + b"0\n1\n")
    (world / "p.tsv").write_bytes(BOM + b"e1\tr\te5\t1\tsys-a\n")
    call_command("import_pool", "fz", str(world / "p.tsv"), "--sample", str(world / "s.txt"), "--name", "bom",
                 stdout=io.StringIO())
    pool = Pool.objects.get(name="bom")
    assert pool.entries.count() == 1 and pool.sample.triples.count() == 2
    call_command("sample_test", "fz", "--from-file", str(world / "s.txt"), "--name", "bom-file", stdout=io.StringIO())
    assert Sample.objects.get(name="bom-file").triples.count() == 2


@pytest.mark.django_db
def test_evaluate_labels_file_with_the_mark(world):  # noqa: F811
    from evaluation.services.labels import JudgmentsFile
    from pooling.models import KnowledgeGraph

    (world / "labels.tsv").write_bytes(BOM + b"e0\tr\te2\tY\ne1\tr\te4\tN\n")
    judged = JudgmentsFile(world / "labels.tsv").judged_triples(KnowledgeGraph.objects.get(name="fz"))
    assert judged.triples.shape == (2, 3) and judged.positive.tolist().count(True) == 1
