"""Reads: a campaign's judged set as a bundle (``export_judgments NAME --format bundle``), layout in
``kgpool/bundle.py``.

Every file is written from the database in a fixed order, without dates of the export or database ids:
annotators are pseudonyms ``A1``, ``A2``... numbered by account age among the people who judged or adjudicated
in the campaign (gold checks apart), so a campaign imported from a bundle (``services/bundle_import``) exports
the same bytes again.
"""
from __future__ import annotations

import io
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from django.contrib.auth import get_user_model

from annotation.models import Adjudication, Campaign, Item, Judgment, Label
from annotation.selectors.labels import FINAL_STATUSES, completed_questions
from annotation.selectors.quality import annotation_qids, annotator_qrels, labels_with_origin, origin_name
from annotation.services.exports import export_judgments
from kgpool.bundle import FORMAT, PYKEEN_PATHS, VERSION, write_bundle
from pooling.engine.questions import HEAD
from pooling.models import Entity, PoolEntry, SampleTriple
from pooling.selectors.kg import kg_relation_keys, kg_triples
from pooling.selectors.pools import entity_keys, pool_export_rows


def pseudonyms(campaign: Campaign) -> dict[int, str]:
    """User pk -> ``A<n>`` for everyone who judged or adjudicated a (non-gold) item, by account age."""
    judges = set(Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).values_list("user_id", flat=True))
    judges |= set(Adjudication.objects.filter(item__campaign=campaign, item__is_gold=False)
                  .values_list("adjudicator_id", flat=True))
    return {pk: f"A{n}" for n, pk in enumerate(sorted(judges), start=1)}


def bundle_files(campaign: Campaign) -> dict[str, bytes]:
    """Every file of the campaign's bundle but ``checksums.sha256`` (relative path -> bytes)."""
    pool, sample = campaign.pool, campaign.pool.sample
    kg = sample.kg
    files: dict[str, bytes] = {}
    keys, relations = entity_keys(kg), kg_relation_keys(kg)
    arrays = kg_triples(kg)
    for split in ("train", "valid", "test"):
        files[f"kg/{split}.txt"] = "".join(f"{keys[h]}\t{relations[r]}\t{keys[t]}\n"
                                           for h, r, t in arrays[split].tolist()).encode()
    files["kg/entity_names.tsv"] = "".join(
        f"{key}\t{_cell(name)}\n" for key, name in Entity.objects.filter(kg=kg).order_by("index").values_list("key", "name")
    ).encode()
    files["sample.txt"] = "".join(f"{h}\t{r}\t{t}\n" for h, r, t in SampleTriple.objects.filter(sample=sample)
                                  .order_by("position").values_list("head__key", "relation__key", "tail__key")).encode()
    files["pool.tsv"] = "".join(f"{h}\t{r}\t{t}\t{'-' if d is None else d}\t{','.join(s) or '-'}\n"
                                for h, r, t, d, s in sorted(pool_export_rows(pool))).encode()
    for fmt, name in (("labels", "labels.tsv"), ("labels-origin", "labels-origin.tsv"), ("positives", "positives.tsv"),
                      ("questions", "questions.tsv"), ("qrels", "qrels/final.txt"), ("readme", "README.md")):
        out = io.StringIO()
        export_judgments(campaign, fmt, out)
        files[name] = out.getvalue().encode()
    names = pseudonyms(campaign)
    User = get_user_model()
    qids = annotation_qids(campaign)  # one qid per question in every annotator's file
    for pk, name in names.items():
        if Judgment.objects.filter(item__campaign=campaign, item__is_gold=False, user_id=pk).exists():
            rows = annotator_qrels(campaign, User(pk=pk), qids)
            files[f"qrels/annotators/{name}.txt"] = "".join(f"{q} 0 {e} {r}\n" for q, e, r in rows).encode()
    files.update(origin_qrels(campaign))
    records = judgment_records(campaign, names)
    files["judgments.jsonl"] = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode()
    from evaluation.services.reusability import result_path

    reusability = result_path(campaign.name)
    if reusability.is_file():
        files["reusability.json"] = reusability.read_bytes()
    files["dataset.json"] = (json.dumps(description(campaign, files, names), indent=2, sort_keys=True,
                                        ensure_ascii=False) + "\n").encode()
    return files


def _cell(text: str) -> str:
    return re.sub(r"[\t\r\n]+", " ", text)


def origin_file(origin: str) -> str:
    return "qrels/origins/" + re.sub(r"[^A-Za-z0-9_-]+", "_", origin) + ".txt"


def origin_qrels(campaign: Campaign) -> dict[str, bytes]:
    """The final qrels split by the origin of each label (a qrels line is one side of a labelled triple)."""
    origin = {(h, r, t): o for h, r, t, _label, o in labels_with_origin(campaign)}
    lines: dict[str, list[str]] = defaultdict(list)
    for question in completed_questions(campaign):
        for entity, rel in question.answers:
            triple = ((entity, question.relation, question.entity) if question.side == HEAD
                      else (question.entity, question.relation, entity))
            lines[origin[triple]].append(f"{question.qid} 0 {entity} {rel}\n")
    return {origin_file(o): "".join(rows).encode() for o, rows in sorted(lines.items())}


def judgment_records(campaign: Campaign, names: dict[int, str]) -> list[dict]:
    """One record per pooled candidate (gold checks apart), sorted by triple: judgments, adjudication, flags and
    the final label with its origin (null while undecided)."""
    judgments: dict[int, list[dict]] = defaultdict(list)
    for j in Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).order_by("given_at", "pk"):
        judgments[j.item_id].append({
            "annotator": names[j.user_id], "answer": j.answer, "source_url": j.source_url,
            "source_domain": j.source_domain, "quote": j.quote, "given_at": j.given_at.isoformat(),
            "time_on_task_ms": j.time_on_task_ms})
    adjudications = {a.item_id: {"adjudicator": names[a.adjudicator_id], "label": a.label, "reason": a.reason,
                                 "decided_at": a.decided_at.isoformat()}
                     for a in Adjudication.objects.filter(item__campaign=campaign, item__is_gold=False)}
    records = []
    items = Item.objects.filter(campaign=campaign, is_gold=False).values_list(
        "pk", "head__key", "relation__key", "tail__key", "status", "label", "label_origin", "rule", "flags")
    for pk, h, r, t, status, label, origin, rule, flags in items.iterator(chunk_size=5000):
        final = status in FINAL_STATUSES and bool(label)
        records.append({"head": h, "relation": r, "tail": t, "label": label if final else None,
                        "origin": origin if final else None, "rule": rule if final else "",
                        "judgments": judgments.get(pk, []), "adjudication": adjudications.get(pk),
                        "flags": list(flags or [])})
    return sorted(records, key=lambda rec: (rec["head"], rec["relation"], rec["tail"]))


def description(campaign: Campaign, files: dict[str, bytes], names: dict[int, str]) -> dict:
    pool, sample = campaign.pool, campaign.pool.sample
    kg = sample.kg
    labels = Counter(line.split(b"\t")[3].strip() for line in files["labels.tsv"].splitlines())
    origins = Counter(origin_name(o, r) for o, r in Item.objects.filter(
        campaign=campaign, is_gold=False, status__in=FINAL_STATUSES).exclude(label="").values_list("label_origin", "rule"))
    return {
        "format": FORMAT, "version": VERSION, "name": campaign.name, "description": campaign.description,
        "kg": {"name": kg.name, "entities": kg.num_entities, "relations": kg.num_relations, "train": kg.num_train,
               "valid": kg.num_valid, "test": kg.num_test},
        "sample": {"name": sample.name, "method": sample.method, "seed": sample.seed, "size": sample.size},
        "pool": {"name": pool.name, "depth": pool.depth, "entries": PoolEntry.objects.filter(pool=pool).count(),
                 "systems": [{"name": n, "architecture": a} for n, a in
                             pool.systems.order_by("name").values_list("name", "architecture")]},
        "campaign": {"judgments_per_item": campaign.judgments_per_item, "judging_order": campaign.judging_order,
                     "item_budget": campaign.item_budget, "allowed_domains": list(campaign.allowed_domains)},
        "counts": {"labels": sum(labels.values()), "positives": labels.get(Label.YES.encode(), 0),
                   "negatives": labels.get(Label.NO.encode(), 0), "questions": files["questions.tsv"].count(b"\n"),
                   "annotators": len(names), "origins": dict(sorted(origins.items()))},
        "files": sorted({*files, "dataset.json", "checksums.sha256"}),
        "load": {"kgpool": "python manage.py import_judgments --bundle PATH",
                 "pandas": "from kgpool.bundle import load; bundle = load(PATH)",
                 "pykeen": {"PathDataset": PYKEEN_PATHS, "all_entities": "from kgpool.bundle import pykeen_dataset"}},
    }


def export_bundle(campaign: Campaign, path: Path | str) -> tuple[Path, dict[str, bytes]]:
    """Write the bundle to ``path`` (a folder, or a .tar.gz); returns the path and the files written."""
    files = bundle_files(campaign)
    return write_bundle(files, path), files
