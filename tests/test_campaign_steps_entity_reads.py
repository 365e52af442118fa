"""A campaign's steps read only the entities they name (issue 18: a KG of millions of entities): sampling, the
exports, a label import and the evaluation's labels never select the whole entity table, and their results
are those of the small KG they run on."""
from __future__ import annotations

import io
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.services.exports import FORMATS, export_judgments
from annotation.services.imports import import_judgments
from evaluation.services.labels import CampaignLabels, JudgmentsFile
from pooling.models import Entity
from pooling.services.samples import draw_sample
from tests.test_admin_large_tables import chain_campaign

pytestmark = pytest.mark.django_db

ENTITY_SCAN = re.compile(r'FROM "pooling_entity"(?! INNER| LEFT)(?:(?!\bIN \().)*$', re.S)


def entity_scans(run) -> list[str]:
    """The queries of ``run`` that select from the entity table without an IN list of the rows they want."""
    with CaptureQueriesContext(connection) as captured:
        run()
    return [q["sql"] for q in captured.captured_queries if ENTITY_SCAN.search(q["sql"])]


def test_steps_read_only_the_entities_they_name(tmp_path):
    campaign = chain_campaign(tmp_path, 300, "w")
    labels = tmp_path / "labels.tsv"
    labels.write_text("w0\tnext\tw5\tY\nw0\tnext\tw6\tN\nw0\tnext\tnowhere\tY\n", encoding="utf-8")
    reports = []
    assert entity_scans(lambda: reports.append(import_judgments(campaign, labels))) == []
    assert reports[0].labelled == 2 and reports[0].unknown == [3]

    for fmt in FORMATS:
        if fmt in ("qrels-annotator", "readme"):
            continue
        out = io.StringIO()
        assert entity_scans(lambda fmt=fmt, out=out: export_judgments(campaign, fmt, out)) == [], fmt
        if fmt == "positives":
            assert sorted(out.getvalue().splitlines()) == ["w0\tnext\tw2", "w0\tnext\tw5"]  # the test triple too

    kg = campaign.pool.sample.kg
    index = dict(Entity.objects.filter(kg=kg).values_list("key", "index"))
    w0, w2, w5, w6 = (index[key] for key in ("w0", "w2", "w5", "w6"))
    judged = []
    assert entity_scans(lambda: judged.append(CampaignLabels(campaign).judged_triples(kg))) == []
    assert sorted(map(tuple, judged[0].triples.tolist())) == sorted([(w0, 0, w2), (w0, 0, w5), (w0, 0, w6)])
    assert judged[0].positive.tolist().count(True) == 2
    file_labels = []
    labels.write_text("w0\tnext\tw5\tY\nw0\tnext\tw6\tN\n", encoding="utf-8")
    assert entity_scans(lambda: file_labels.append(JudgmentsFile(labels).judged_triples(kg))) == []
    assert file_labels[0].triples.tolist() == [[w0, 0, w5], [w0, 0, w6]]

    samples = []
    assert entity_scans(lambda: samples.append(draw_sample(kg, size=1, seed=0, name="again"))) == []
    assert samples[0].triples.get().head.key == "w0"
