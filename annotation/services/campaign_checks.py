"""What the plan of a campaign file can tell before anything is imported or trained (``campaign_apply``): whether the
sample it asks for can be drawn, and how many entities its KG has, from the database or from the files of a KG the
apply would import. A refusal here stops the apply before it writes anything, instead of halfway."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from annotation.lib.campaign_file import CampaignSpec, KGSpec
from pooling.engine.kgfiles import SPLITS, split_fields
from pooling.models import KnowledgeGraph
from pooling.services.pools import depth_refusal
from pooling.services.samples import size_refusal

MAX_COUNTED_BYTES = 64 << 20  # the split files of a KG still to import are read for its entities up to this size


def sample_impossible(spec: CampaignSpec, kg: KnowledgeGraph | None) -> str:
    """Why the sample the file asks for cannot be drawn, as far as the plan can tell ('' when it can)."""
    sample = spec.sample
    if sample.file:
        return "" if Path(sample.file).is_file() else f"{sample.file} is not a file (the sample's triples or indices)"
    if sample.size is None:
        return ""
    if kg is not None:
        test = kg.num_test
    else:  # the KG is imported later: its distinct test triples, as the import keeps them
        triples = _planned_triples(spec.kg, "test")
        if triples is None:
            return ""
        test = len(set(triples))
    return size_refusal(sample.size, test, spec.kg.name)


def pool_impossible(spec: CampaignSpec, kg: KnowledgeGraph | None) -> str:
    """Why the pool the file asks for cannot have its depth, as far as the plan can tell ('' when it can)."""
    entities = kg.num_entities if kg is not None else _planned_entities(spec.kg)
    return "" if entities is None else depth_refusal(spec.pool.depth, entities, spec.kg.name)


def _planned_entities(spec: KGSpec) -> int | None:
    """The KG's entities: from the database, or counted in the files of a KG the apply would import (up to
    ``MAX_COUNTED_BYTES`` of them; None beyond, or when unknown)."""
    kg = KnowledgeGraph.objects.filter(name=spec.name).first()
    if kg is not None:
        return kg.num_entities
    if spec.path is None:
        return None
    paths = [Path(spec.path) / f"{split}.txt" for split in SPLITS]
    if not all(path.is_file() for path in paths) or sum(p.stat().st_size for p in paths) > MAX_COUNTED_BYTES:
        return None
    entities: set[str] = set()
    for split in SPLITS:
        triples = _planned_triples(spec, split)
        if triples is None:
            return None
        entities.update(key for h, _r, t in triples for key in (h, t))
    return len(entities)


def _planned_triples(spec: KGSpec, split: str) -> Iterator[tuple[str, str, str]] | None:
    """The (head, relation, tail) lines of a split file of a KG still to import, split as the import splits them
    (``kgfiles.split_fields``), read one line at a time; None when there is none. A line the import would refuse
    is left out: the import names it."""
    path = None if spec.path is None else Path(spec.path) / f"{split}.txt"
    if path is None or not path.is_file():
        return None

    def triples() -> Iterator[tuple[str, str, str]]:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as lines:
            for line in lines:
                fields = split_fields(line.rstrip("\r\n"))
                if len(fields) == 3 and all(fields):
                    yield fields[0], fields[1], fields[2]

    return triples()
