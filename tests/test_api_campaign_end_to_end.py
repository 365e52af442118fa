"""A whole campaign run through /api/v1/ with only HTTP calls, through kgpool.client (issue 17): upload Nations,
train two systems, draw a sample, build the pool, create the campaign, two annotators judge everything, an
adjudicator decides the conflicts, the labels and the bundle are exported and the systems evaluated. The exported
labels are checked against the answers the test itself gave (a hand-made reference), and annotators are refused
the managers' endpoints. People's accounts and tokens exist beforehand (made here with the ORM)."""
from __future__ import annotations

import io
import tarfile

import httpx
import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from kgpool.client import ApiError, Client
from kgpool.wsgi import application
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)  # background work runs on commit (in-process: eager)
URL = "https://en.wikipedia.org/wiki/Nations"


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The WSGI handler closes old connections around each request; keep the test's (as Django's test client)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def client_of(username: str, *, staff: bool = False) -> Client:
    user = get_user_model().objects.create_user(username, is_staff=staff)
    token = Token.objects.create(user=user).key
    return Client("http://testserver", token=token, transport=httpx.WSGITransport(app=application), poll=0.05)


def answer(annotator: str, head: str, tail: str) -> str:
    """The annotators' answers: the same rule, except that ann2 flips about a quarter of them."""
    base = "Y" if (len(head) + len(tail)) % 3 == 0 else "N"
    flip = annotator == "ann2" and (7 * len(head) + len(tail)) % 4 == 0
    return ("N" if base == "Y" else "Y") if flip else base


def adjudicated_label(head: str, tail: str) -> str:
    return "Y" if len(head) % 2 == 0 else "N"


def test_a_campaign_end_to_end_over_http(storage, shared_data, tmp_path):  # noqa: F811
    staff = client_of("boss", staff=True)
    people = {name: client_of(name) for name in ("ann1", "ann2", "ada")}

    upload = staff.upload_kg("nations", shared_data / "nations")
    assert upload["status"] == "done" and upload["kg"] == "nations"
    assert staff.kg("nations")["num_entities"] == 14
    for architecture in ("distmult", "transe"):
        system = staff.train("nations", architecture, dim=16, epochs=3, eval_every=3, batch_size=512, lr=0.05,
                             device="cpu", num_threads=1)
        assert system["status"] == "ready" and system["valid_mrr"] > 0
    sample = staff.draw_sample("nations", 6, seed=1)
    pool = staff.build_pool("nations", sample["name"], ["distmult", "transe"], depth=2)
    entries = list(staff.pool_entries(pool["id"], page_size=4))
    assert len(entries) == pool["entries"] > 4 and all(e["hits"] and e["depth"] <= 2 for e in entries)

    campaign = staff.create_campaign("nations-http", pool["id"], gold=True, filters=["cardinality"])["name"]
    for name, role in (("ann1", "annotator"), ("ann2", "annotator"), ("ada", "adjudicator")):
        staff.add_member(campaign, name, role)
    with pytest.raises(ApiError) as refused:
        people["ann1"].pool_entries(pool["id"]).__next__()
    assert refused.value.status == 403
    for endpoint in (people["ann1"].progress, people["ann1"].quality, people["ann1"].campaign):
        with pytest.raises(ApiError, match="admins and staff"):
            endpoint(campaign)

    given: dict[tuple[str, str, str], dict[str, str]] = {}
    for name in ("ann1", "ann2"):
        one_request = name == "ann2"  # each answer brings the next hand-out (next=True)
        handed = people[name].next_item(campaign)
        while handed["hand_out"] is not None:
            item = handed["item"]
            triple = (item["head"]["key"], item["relation"]["key"], item["tail"]["key"])
            label = answer(name, triple[0], triple[2])
            answered = people[name].judge(campaign, handed["hand_out"], label, URL, request_id=handed["request_id"],
                                          next=one_request)
            handed = answered["next"] if one_request else people[name].next_item(campaign)
            given.setdefault(triple, {})[name] = label
    decided = {}
    while (conflict := people["ada"].next_adjudication(campaign))["hand_out"] is not None:
        item = conflict["item"]
        triple = (item["head"]["key"], item["relation"]["key"], item["tail"]["key"])
        decided[triple] = adjudicated_label(triple[0], triple[2])
        people["ada"].adjudicate(campaign, conflict["hand_out"], decided[triple], "read the source")
    assert decided and any(a["ann1"] == a["ann2"] for a in given.values())

    progress = staff.progress(campaign)
    assert progress["done"] and progress["left"] == 0 and progress["gold"] > 0
    exported = staff.export(campaign, "labels").decode()
    labels = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in exported.splitlines()}
    judged = {t: a for t, a in given.items() if set(a) == {"ann1", "ann2"} and t in labels}  # gold checks aside
    expected = {t: decided.get(t) or a["ann1"] for t, a in judged.items()}
    assert all(a["ann1"] == a["ann2"] for t, a in judged.items() if t not in decided)
    assert {t: labels[t] for t in expected} == expected
    bundle = staff.export(campaign, "bundle", tmp_path / "nations.tar.gz")
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        member = lambda name: tar.extractfile(f"nations-http/{name}").read().decode()  # noqa: E731
        labels_in_bundle, sample_lines = member("labels.tsv"), member("sample.txt")
    assert "nations-http/dataset.json" in names and labels_in_bundle == exported
    sampled = {tuple(line.split("\t")) for line in sample_lines.splitlines()}
    others = {t: label for t, label in labels.items() if t not in expected}  # the sample (Y) and rule negatives (N)
    assert {t for t, label in others.items() if label == "Y"} == sampled
    assert sum(label == "N" for label in others.values()) == progress["statuses"]["auto_negative"]
    assert staff.quality(campaign, samples=50)["agreement"][0]["items"] == len(judged)

    run = staff.evaluate("nations", sample["name"], campaign=campaign, analyses=False, open_world=False)
    results = staff.results(run["id"])
    assert {row["system"] for row in results["tables"]["completed"]} == {"distmult", "transe"}
    assert set(results["tables"]) >= {"sparse", "completed"}
    figures = [name for name in run["files"] if name.endswith(".png")]
    assert figures and staff.evaluation_file(run["id"], figures[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert people["ann1"].evaluation(run["id"])["status"] == "done"  # members read their campaign's runs
    assert io.BytesIO(staff.export(campaign, "readme")).read().startswith(b"# nations-http")
