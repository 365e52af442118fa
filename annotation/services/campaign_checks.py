"""What the plan of a campaign file can tell before anything is imported or trained (``campaign_apply``): whether the
sample it asks for can be drawn, and how many entities its KG has, from the database or from the files of a KG the
apply would import. A refusal here stops the apply before it writes anything, instead of halfway."""
from __future__ import annotations

from pathlib import Path

from annotation.lib.campaign_file import CampaignSpec, KGSpec
from pooling.models import KnowledgeGraph

MAX_COUNTED_BYTES = 64 << 20  # the split files of a KG still to import are read for the plan up to this size


def sample_impossible(spec: CampaignSpec, kg: KnowledgeGraph | None) -> str:
    """Why the sample the file asks for cannot be drawn, as far as the plan can tell ('' when it can)."""
    sample = spec.sample
    if sample.file:
        return "" if Path(sample.file).is_file() else f"{sample.file} is not a file (the sample's triples or indices)"
    if kg is not None:
        test = kg.num_test
    elif spec.kg.path is not None and (Path(spec.kg.path) / "test.txt").is_file():
        with open(Path(spec.kg.path) / "test.txt", "rb") as lines:  # the KG is imported later
            test = sum(1 for line in lines if line.strip())
    else:
        return ""
    if sample.size is not None and sample.size > test:
        return f"cannot sample {sample.size} of the {test} test triples of {spec.kg.name}"
    return ""


def planned_entities(spec: KGSpec) -> int | None:
    """The KG's entities: from the database, or counted in the files of a KG the apply would import (up to
    ``MAX_COUNTED_BYTES`` of them; None beyond, or when unknown)."""
    kg = KnowledgeGraph.objects.filter(name=spec.name).first()
    if kg is not None:
        return kg.num_entities
    if spec.path is None:
        return None
    splits = [Path(spec.path) / f"{split}.txt" for split in ("train", "valid", "test")]
    if not all(path.is_file() for path in splits) or sum(p.stat().st_size for p in splits) > MAX_COUNTED_BYTES:
        return None
    entities: set[bytes] = set()
    for path in splits:
        with open(path, "rb") as lines:
            for line in lines:
                fields = line.split(b"\t") if b"\t" in line else line.split()
                if len(fields) == 3:
                    entities.update((fields[0].strip(), fields[2].strip()))
    return len(entities)
