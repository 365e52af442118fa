"""Every dataset in ../shared/data imports with the counts found in its files."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from pooling.models import Entity, KnowledgeGraph, Relation, Triple
from pooling.selectors.kg import kg_triples
from tests.kg_helpers import count_dataset

SMALL_DATASETS = ["umls", "nations", "kinship", "wn18rr", "codex-s"]


def stored_counts(kg: KnowledgeGraph) -> dict[str, int]:
    return {
        "entities": Entity.objects.filter(kg=kg).count(),
        "relations": Relation.objects.filter(kg=kg).count(),
        **{split: Triple.objects.filter(kg=kg, split=split).count() for split in ("train", "valid", "test")},
    }


@pytest.mark.django_db
@pytest.mark.parametrize("dataset", SMALL_DATASETS)
def test_shared_dataset_counts(shared_data, dataset):
    out = StringIO()
    call_command("import_kg", dataset, str(shared_data / dataset), stdout=out, verbosity=0)
    kg = KnowledgeGraph.objects.get(name=dataset)
    expected = count_dataset(shared_data / dataset)
    assert stored_counts(kg) == expected
    assert {"entities": kg.num_entities, "relations": kg.num_relations, "train": kg.num_train,
            "valid": kg.num_valid, "test": kg.num_test} == expected
    arrays = kg_triples(kg)
    assert {split: len(arrays[split]) for split in ("train", "valid", "test")} == {
        split: expected[split] for split in ("train", "valid", "test")
    }
    assert f"{expected['entities']:,} entities" in out.getvalue()


@pytest.mark.django_db
@pytest.mark.slow
def test_fb15k237_published_counts_metadata_and_categories(shared_data):
    call_command("import_kg", "fb15k-237", str(shared_data / "fb15k-237"), stdout=StringIO(), verbosity=0)
    kg = KnowledgeGraph.objects.get(name="fb15k-237")
    assert stored_counts(kg) == {"entities": 14541, "relations": 237, "train": 272115, "valid": 17535, "test": 20466}

    irons = Entity.objects.get(kg=kg, key="/m/016ywr")
    assert irons.name == "Jeremy Irons"
    assert irons.url.startswith("https://en.wikipedia.org/wiki/")
    assert irons.wikidata_id.startswith("Q")
    nationality = Relation.objects.get(kg=kg, key="/people/person/nationality")
    assert (nationality.domain_type, nationality.range_type) == ("/people/person", "/location/country")
    assert nationality.text

    # Index arrays keep the file's order: row i of the test array is line i+1 of test.txt (samples rely on it).
    arrays = kg_triples(kg)
    lines = (shared_data / "fb15k-237" / "test.txt").read_text().splitlines()
    keys = dict(Entity.objects.filter(kg=kg).values_list("index", "key"))
    relation_keys = dict(Relation.objects.filter(kg=kg).values_list("index", "key"))
    for i in (0, 1, 12345, len(lines) - 1):
        head, relation, tail = arrays["test"][i]
        assert "\t".join((keys[head], relation_keys[relation], keys[tail])) == lines[i]

    out, err = StringIO(), StringIO()
    call_command("relation_categories", "fb15k-237", stdout=out, stderr=err)
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert len(rows) == 237
    categories = [row[1] for row in rows]
    assert {c: categories.count(c) for c in ("1-1", "1-N", "N-1", "N-N")} == {"1-1": 17, "1-N": 26, "N-1": 86, "N-N": 108}
    assert "17 1-1, 26 1-N, 86 N-1, 108 N-N" in err.getvalue()
    # The categories follow the SPEC thresholds on the printed means.
    for _key, category, tph, hpt in rows:
        assert category == {(False, False): "1-1", (True, False): "1-N", (False, True): "N-1", (True, True): "N-N"}[
            (float(tph) >= 1.5, float(hpt) >= 1.5)
        ]


@pytest.mark.django_db
@pytest.mark.slow
def test_codex_m_with_types_and_labels(shared_data):
    codex = shared_data / "codex"
    call_command(
        "import_kg", "codex-m", str(shared_data / "codex-m"),
        "--entity-types", str(codex / "entity2types.json"),
        "--type-labels", str(codex / "en" / "types.json"),
        "--relation-labels", str(codex / "en" / "relations.json"),
        stdout=StringIO(), verbosity=0,
    )
    kg = KnowledgeGraph.objects.get(name="codex-m")
    assert stored_counts(kg) == count_dataset(shared_data / "codex-m")
    assert Entity.objects.filter(kg=kg).exclude(types=[]).count() == Entity.objects.filter(kg=kg).count()
    assert Relation.objects.get(kg=kg, key="P509").text == "cause of death"
    assert kg.type_labels["Q28640"] == "profession"
