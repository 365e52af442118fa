"""Starting an evaluation from the site with a labels file of the wrong shape (issue 15: a 3-column file,
/etc/passwd gave HTTP 500) is a form error naming the file and line, and leaves no run behind."""
from __future__ import annotations

import html
from pathlib import Path

import pytest

from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "boss", staff=True))
    return client, campaign.pool.sample


def post(client, sample, labels_file: str):
    return client.post("/evaluation/new/", {"sample": sample.pk, "labels_file": labels_file, "policy": "realistic",
                                            "dp_test": "t"})


def test_a_three_column_file_is_a_form_error_with_file_and_line(staff_client, tmp_path):
    client, sample = staff_client
    labels = tmp_path / "three.tsv"
    labels.write_text("# h r t\nirons\t/people/person/nationality\tuk\n", encoding="utf-8")
    response = post(client, sample, str(labels))
    assert response.status_code == 200
    assert f"{labels}:2: expected `h r t Y|N`, got 3 fields" in html.unescape(response.content.decode())
    assert not EvaluationRun.objects.exists()


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="no /etc/passwd")
def test_a_system_file_is_a_form_error(staff_client):
    client, sample = staff_client
    response = post(client, sample, "/etc/passwd")
    assert response.status_code == 200
    assert "/etc/passwd:1: expected `h r t Y|N`" in html.unescape(response.content.decode())
    assert not EvaluationRun.objects.exists()


@pytest.mark.django_db
def test_a_folder_or_a_device_is_named_as_such_and_each_error_is_shown_once(staff_client, tmp_path):
    client, sample = staff_client
    for path, words in ((str(tmp_path), "is a folder"), ("/dev/null", "is not a regular file")):
        body = html.unescape(post(client, sample, path).content.decode())
        assert body.count(f"{path} {words}: give a judgments file") == 1, body[:3000]
    labels = tmp_path / "three.tsv"
    labels.write_text("# h r t\nirons\t/people/person/nationality\tuk\n", encoding="utf-8")
    body = html.unescape(post(client, sample, str(labels)).content.decode())
    assert body.count(f"{labels}:2: expected `h r t Y|N`, got 3 fields") == 1  # once, not twice
    assert not EvaluationRun.objects.exists()
