"""Reads: labelled triples at hand on a KG, to measure how often a trivial-filter rule would be wrong before
applying it (the filter preview's precision): the final labels of the KG's campaigns, or a judgments file.

Labels a rule gave (origin ``rule``, or a reused rule label) are left out: a rule cannot vouch for itself.
Imported labels are kept (that is how a published campaign's judgments come in, ``import_judgments``); note
that a published set's own automatic negatives are in it as plain N.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.models import Campaign, Item, Label
from annotation.selectors.labels import FINAL_STATUSES
from annotation.services.errors import AnnotationError
from pooling.models import Entity, KnowledgeGraph, Relation

Triple = tuple[int, int, int]  # (head index, relation index, tail index)


@dataclass(frozen=True)
class ReferenceLabels:
    description: str  # where the labels come from, for reports
    labels: dict[Triple, str]  # Y / N
    conflicting: int = 0  # triples labelled both ways (campaigns that disagree), left out

    def __len__(self) -> int:
        return len(self.labels)


def campaign_reference_labels(kg: KnowledgeGraph) -> ReferenceLabels:
    """The final labels of every campaign on ``kg`` (people's, adjudicated, imported, reused, audit; not the
    rules'). A triple that campaigns label differently is left out and counted."""
    items = (
        Item.objects.filter(campaign__pool__sample__kg=kg, is_gold=False, status__in=FINAL_STATUSES)
        .exclude(label="").exclude(label_origin=Item.Origin.RULE)
        .exclude(label_origin=Item.Origin.REUSED, rule__gt="")
    )
    labels: dict[Triple, str] = {}
    conflicting: set[Triple] = set()
    for h, r, t, label in items.values_list("head__index", "relation__index", "tail__index", "label").iterator(
        chunk_size=5000
    ):
        triple = (h, r, t)
        if labels.setdefault(triple, label) != label:
            conflicting.add(triple)
    for triple in conflicting:
        del labels[triple]
    campaigns = Campaign.objects.filter(pool__sample__kg=kg).count()
    what = f"final labels of the {campaigns} campaign(s) on {kg.name} ({len(labels)} labelled triples, rule labels left out)"
    return ReferenceLabels(what, labels, len(conflicting))


def file_reference_labels(kg: KnowledgeGraph, path: Path | str) -> ReferenceLabels:
    """``h<TAB>r<TAB>t<TAB>Y|N`` lines with the KG's keys (e.g. the published judgments.tsv); ``#`` comments
    and blank lines skipped. A bad line is an AnnotationError naming the file and the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnnotationError(f"{path}: cannot read: {exc}") from None
    entities = dict(Entity.objects.filter(kg=kg).values_list("key", "index"))
    relations = dict(Relation.objects.filter(kg=kg).values_list("key", "index"))
    labels: dict[Triple, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = [f.strip() for f in (raw.split("\t") if "\t" in raw else raw.split())]
        if len(fields) != 4 or fields[3] not in (Label.YES, Label.NO):
            raise AnnotationError(f"{path}:{number}: expected `head<TAB>relation<TAB>tail<TAB>Y|N`")
        h, r, t, label = fields
        for key, table, what in ((h, entities, "entity"), (r, relations, "relation"), (t, entities, "entity")):
            if key not in table:
                raise AnnotationError(f"{path}:{number}: unknown {what} {key!r} in {kg.name}")
        triple = (entities[h], relations[r], entities[t])
        if labels.setdefault(triple, label) != label:
            raise AnnotationError(f"{path}:{number}: ({h}, {r}, {t}) is labelled both ways")
    return ReferenceLabels(f"{path.name} ({len(labels)} labelled triples)", labels)
