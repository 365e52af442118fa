"""Loading final labels made elsewhere (``h r t Y|N`` files) into a campaign (origin imported)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from annotation.models import Campaign, Item, Label
from annotation.services.errors import AnnotationError
from pooling.engine import userfiles
from pooling.models import Relation, SampleTriple
from pooling.selectors.pools import entity_pks_of_keys

BATCH = 2000
# Items whose label may be replaced by an imported one: not (yet) decided by people in this campaign.
REPLACEABLE = (Item.Status.PENDING, Item.Status.AUTO_NEGATIVE, Item.Status.IMPORTED)


@dataclass
class ImportReport:
    lines: int = 0
    labelled: int = 0  # items given the imported label
    sample: int = 0  # lines that are sampled test triples (Y by definition; nothing to store)
    sample_not_yes: list[int] = field(default_factory=list)  # line numbers of sampled triples labelled N
    kept: int = 0  # items already in human hands, left as they are
    unknown: list[int] = field(default_factory=list)  # line numbers of triples in neither the pool nor the sample


def import_judgments(campaign: Campaign, path: Path | str, *, origin: str = Item.Origin.IMPORTED, strict: bool = False) -> ImportReport:
    """Store the final labels of ``path`` (``h r t Y|N`` per line, keys of the campaign's KG) on the matching
    items. Items judged in this campaign keep their labels (counted in ``kept``). With ``strict`` any line
    that is neither a pool entry nor a sampled triple refuses the whole file."""
    path = Path(path)
    kg_id = campaign.pool.sample.kg_id
    relations = dict(Relation.objects.filter(kg_id=kg_id).values_list("key", "pk"))
    items = {
        (h, r, t): (pk, status)
        for pk, h, r, t, status in Item.objects.filter(campaign=campaign, is_gold=False).values_list(
            "pk", "head_id", "relation_id", "tail_id", "status"
        ).iterator(chunk_size=5000)
    }
    sample = set(SampleTriple.objects.filter(sample=campaign.pool.sample_id).values_list("head_id", "relation_id", "tail_id"))
    report = ImportReport()
    updates: dict[str, list[int]] = {Label.YES: [], Label.NO: []}
    try:  # split("\n"), not splitlines(): line numbers as an editor's
        lines = userfiles.read_text(path, universal_newlines=True).split("\n")
    except userfiles.UserFileError as exc:
        raise AnnotationError(f"{exc.where}: cannot read: {exc.message}") from None
    entities = _entity_pks(kg_id, lines)
    labelled_on: dict[tuple[str, str, str], tuple[str, int]] = {}  # (h, r, t) -> (label, line) of its first line
    for number, raw in enumerate(lines, start=1):
        fields = raw.split("\t") if "\t" in raw else raw.split()
        if not raw.strip() or raw.startswith("#"):
            continue
        if len(fields) != 4 or fields[3].strip() not in (Label.YES, Label.NO):
            raise AnnotationError(f"{path}:{number}: expected `head<TAB>relation<TAB>tail<TAB>Y|N`")
        report.lines += 1
        h, r, t, label = (x.strip() for x in fields)
        first = labelled_on.setdefault((h, r, t), (label, number))
        if first[0] != label:  # the last line won silently before
            raise AnnotationError(f"{path}:{number}: {h} {r} {t} is labelled both ways (first on line {first[1]})")
        key = (entities.get(h), relations.get(r), entities.get(t))
        if key in sample:
            report.sample += 1
            if label != Label.YES:
                report.sample_not_yes.append(number)
            continue
        found = items.get(key)
        if found is None:
            report.unknown.append(number)
            continue
        pk, status = found
        if status not in REPLACEABLE:
            report.kept += 1
            continue
        updates[label].append(pk)
    if not report.lines:  # an empty file labelled nothing and said "0 lines", exit status 0
        raise AnnotationError(f"{path}: no labels in it (expected `head<TAB>relation<TAB>tail<TAB>Y|N` lines)")
    if strict and report.unknown:
        shown = ", ".join(map(str, report.unknown[:10]))
        raise AnnotationError(f"{path}: {len(report.unknown)} line(s) are neither pool entries nor sampled triples (lines {shown} ...)")
    with transaction.atomic():
        for label, pks in updates.items():
            for start in range(0, len(pks), BATCH):
                report.labelled += Item.objects.filter(pk__in=pks[start:start + BATCH], status__in=REPLACEABLE).update(
                    status=Item.Status.IMPORTED, label=label, label_origin=origin, rule=""
                )
    return report


def _entity_pks(kg_id: int, lines: list[str]) -> dict[str, int]:
    """key -> pk of the entities the lines name (not every entity of a KG of millions)."""
    return entity_pks_of_keys(kg_id, {field.strip() for raw in lines
                                      for field in (raw.split("\t") if "\t" in raw else raw.split())[0:3:2]})
