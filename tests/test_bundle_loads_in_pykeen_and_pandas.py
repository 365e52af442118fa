"""A judged-set bundle loads in one line (issue 17): PyKEEN's own PathDataset on the documented layout, kgpool's
pykeen_dataset (every KG entity kept) and kgpool.bundle.load into pandas; figures checked against the bundle's
text files read here with plain Python."""
from __future__ import annotations

import pytest

from annotation.services.bundles import export_bundle
from kgpool.bundle import PYKEEN_PATHS, load, pykeen_dataset
from tests._history_support import judged_umls_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def triples(path) -> list[tuple[str, str, str]]:
    return [tuple(line.split("\t")[:3]) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_a_bundle_is_a_pykeen_dataset_and_pandas_frames(storage, tmp_path):  # noqa: F811
    from pykeen.datasets import PathDataset

    campaign = judged_umls_campaign("pk").campaign
    folder, _files = export_bundle(campaign, tmp_path / "pk")
    train, valid, positives = (triples(folder / PYKEEN_PATHS[k]) for k in ("training_path", "validation_path",
                                                                              "testing_path"))
    labels = [line.split("\t") for line in (folder / "labels.tsv").read_text().splitlines()]
    assert sorted(positives) == sorted(tuple(row[:3]) for row in labels if row[3] == "Y")
    assert set(triples(folder / "sample.txt")) <= set(positives)  # the sparse labels are positives too

    dataset = PathDataset(**{key: folder / value for key, value in PYKEEN_PATHS.items()})
    known_entities = {e for h, _r, t in train for e in (h, t)}
    known_relations = {r for _h, r, _t in train}
    kept = [t for t in positives if t[0] in known_entities and t[2] in known_entities and t[1] in known_relations]
    assert dataset.training.num_triples == len(set(train))
    assert dataset.testing.num_triples == len(kept) > 0
    labelled = {(dataset.training.entity_id_to_label[h], dataset.training.relation_id_to_label[r],
                 dataset.training.entity_id_to_label[t]) for h, r, t in dataset.testing.mapped_triples.tolist()}
    assert labelled == set(kept)

    full = pykeen_dataset(folder)
    assert full.testing.num_triples == len(positives) and full.validation.num_triples == len(valid)
    assert full.training.num_entities == campaign.pool.sample.kg.num_entities

    bundle = load(folder)
    assert len(bundle.labels) == len(labels) and len(bundle.positives) == len(positives)
    assert bundle.dataset["name"] == "pk" and bundle.dataset["counts"]["positives"] == len(positives)
    relevant = sum(1 for line in (folder / "qrels" / "final.txt").read_text().splitlines() if line.endswith(" 1"))
    assert int(bundle.qrels.rel.sum()) == relevant
    assert set(bundle.annotator_qrels.annotator) == {p.stem for p in (folder / "qrels" / "annotators").iterdir()}
    assert len(bundle.pool) == len((folder / "pool.tsv").read_text().splitlines())
    assert bundle.pool.depth.max() <= campaign.pool.depth and len(bundle.splits["train"]) == len(train)
    assert bundle.readme.startswith("# pk: judged test set of pk-umls")
