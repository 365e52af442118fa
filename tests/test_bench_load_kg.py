"""bench/load_annotation.py --kg: the campaign's KG is the bundled UMLS or CoDEx-S with CoDEx's entity types and
their labels (what a KG with types brings to every judging request: its 3,443 type labels, 530 KB)."""
from __future__ import annotations

import json

import pytest

from tests._pool_support import storage  # noqa: F401 - fixture
from tests._spy_support import bench_module

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def bench():
    yield from bench_module("load_annotation.py")


def test_the_codex_campaign_has_codex_s_with_codexs_types(bench, shared_data, storage):
    labels = json.loads((shared_data / "codex" / "en" / "types.json").read_text())
    campaign = bench.build_campaign(items=30, seed=3, kg_name="codex-s", shared_data=shared_data)
    kg = campaign.pool.sample.kg
    assert kg.name == "codex-s" and len(kg.type_labels) == len(labels) > 3000
    assert campaign.items.count() == 30
    assert campaign.items.filter(head__types=[]).count() < 30  # the entities have their types
    assert bench.parse(["--kg", "codex-s"]).kg == "codex-s" and bench.parse([]).kg == "umls"
