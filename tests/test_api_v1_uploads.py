"""Uploads through /api/v1/ (issue 17), a knowledge graph or a system's run: the files are stored and imported in the
background with progress; a bad file fails the upload with the importer's one-line reason and imports nothing;
a taken name is 409, a file over the size limit 400."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from pooling.models import KnowledgeGraph, Upload
from tests._annotation_web_support import member, nationality_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
TRAIN = "a\tr\tb\nb\tr\tc\nc\ts\ta\n"


def files(train: str = TRAIN) -> dict[str, SimpleUploadedFile]:
    return {"train": SimpleUploadedFile("train.txt", train.encode()),
            "valid": SimpleUploadedFile("valid.txt", b"a\ts\tc\n"),
            "test": SimpleUploadedFile("test.txt", b"c\tr\ta\n"),
            "entity_names": SimpleUploadedFile("names.tsv", "a\tAlpha\nb\tBéta\n".encode())}


@pytest.fixture
def staff(storage, tmp_path):  # noqa: F811
    campaign = nationality_campaign(tmp_path)
    client = APIClient()
    client.force_authenticate(member(campaign, "boss", staff=True))
    return client


def test_a_kg_upload_is_imported_in_the_background_with_progress(staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = staff.post("/api/v1/kgs/", {"name": "tiny", "description": "three triples", **files()},
                              format="multipart")
    assert response.status_code == 202 and response.json()["status"] == "pending", response.content
    assert len(queued) == 1  # the import is queued on commit, not run inside the request's transaction
    upload = staff.get(f"/api/v1/uploads/{response.json()['id']}/").json()
    assert upload["status"] == "done" and upload["kg"] == "tiny" and upload["error"] == ""
    assert upload["progress_done"] == upload["progress_total"] > 0 and upload["stage"] == "done"
    kg = KnowledgeGraph.objects.get(name="tiny")
    assert (kg.num_entities, kg.num_relations, kg.num_train, kg.num_valid, kg.num_test) == (3, 2, 3, 1, 1)
    assert kg.description == "three triples" and kg.entities.get(key="b").name == "Béta"
    assert staff.get("/api/v1/kgs/tiny/").json()["num_train"] == 3

    again = staff.post("/api/v1/kgs/", {"name": "tiny", **files()}, format="multipart")
    assert again.status_code == 409 and "already exists" in again.json()["detail"]


def test_a_bad_file_fails_the_upload_with_the_reason_and_imports_nothing(staff, django_capture_on_commit_callbacks,
                                                                       settings):
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post("/api/v1/kgs/", {"name": "broken", **files(TRAIN + "d\tr\n")}, format="multipart")
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status == "failed" and "train.txt:4" in upload.error and "\n" not in upload.error
    assert not KnowledgeGraph.objects.filter(name="broken").exists()

    settings.KGPOOL_MAX_UPLOAD_BYTES = 10
    big = staff.post("/api/v1/kgs/", {"name": "big", **files()}, format="multipart")
    assert big.status_code == 400 and "over the upload limit" in big.json()["detail"]
    missing = staff.post("/api/v1/kgs/", {"name": "half", "train": files()["train"]}, format="multipart")
    assert missing.status_code == 400 and set(missing.json()) >= {"valid", "test"}
    assert not Upload.objects.filter(name__in=("big", "half")).exists()


def test_a_trec_run_upload_becomes_a_ranked_system(staff, django_capture_on_commit_callbacks):
    from pooling.models import Question, Ranking, System

    qids = dict(Question.objects.filter(sample__name="all", sample__kg__name="nat-kg").values_list("side", "qid"))
    run = f"{qids[1]} Q0 uk 1 3.0 r\n{qids[1]} Q0 ireland 2 2.0 r\n{qids[0]} Q0 caine 1 1.0 r\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post("/api/v1/kgs/nat-kg/systems/import/", {
            "kind": "run", "name": "bm25", "sample": "all", "run": SimpleUploadedFile("x.trec", run.encode())},
            format="multipart")
    assert response.status_code == 202, response.content
    upload = staff.get(f"/api/v1/uploads/{response.json()['id']}/").json()
    assert upload["status"] == "done" and upload["system"] == "bm25", upload
    system = System.objects.get(kg__name="nat-kg", name="bm25")
    assert system.origin == "imported" and Ranking.objects.filter(system=system, sample__name="all").exists()
    assert staff.get("/api/v1/kgs/nat-kg/systems/bm25/").json()["status"] == "ready"
    taken = staff.post("/api/v1/kgs/nat-kg/systems/import/", {
        "kind": "run", "name": "bm25", "sample": "all", "run": SimpleUploadedFile("x.trec", run.encode())},
        format="multipart")
    assert taken.status_code == 409
