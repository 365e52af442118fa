"""Writes: a judged set loaded back from its bundle (``import_judgments --bundle PATH``, layout in ``kgpool/bundle.py``).

Into an empty instance it creates the KG (splits and entity names), the sample (same method, seed and triples),
the pool (imported: depths and the systems that retrieved each candidate; the systems as imported placeholders
with their architecture), and the campaign with every candidate's judgments and adjudication by pseudonymous,
inactive accounts (``<campaign>-A1``...), its flags and the labels decided outside judging (rules, imported,
reused, audit). Item states are derived from those facts by the one derivation of ``annotation.lib.item_state``
and must give the bundle's final labels, so exporting the imported campaign gives the same bundle. A KG or
sample of the same name already here must be the same (checked); the campaign must be new (``as_name`` imports
it under another name). Everything is checked and written in one transaction: a refused bundle leaves nothing.
"""
from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.lib.item_state import ItemFacts, derive_item_state
from annotation.models import Adjudication, Campaign, Item, Judgment, LabelVersion
from annotation.services.errors import AnnotationError
from kgpool.bundle import FORMAT, VERSION, BundleError, read_files
from pooling.models import KnowledgeGraph, Pool, Sample, System
from pooling.storage import remove_file

BATCH = 2000


class BundleImportError(AnnotationError):
    """The bundle was refused (one line naming it and the file); nothing was written."""


@dataclass
class BundleImportReport:
    campaign: Campaign
    created: list[str] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    judgments: int = 0
    adjudications: int = 0
    labels: int = 0


def import_bundle(path: Path | str, *, as_name: str | None = None) -> BundleImportReport:
    path = Path(path)
    try:
        files = read_files(path)
        dataset = json.loads(files["dataset.json"])
    except (BundleError, ValueError) as exc:
        raise BundleImportError(str(exc)) from None
    if dataset.get("format") != FORMAT or dataset.get("version") != VERSION:
        raise BundleImportError(f"{path}: dataset.json is not a {FORMAT} version {VERSION} description")
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kgpool-bundle-") as folder:
        work = Path(folder)
        for name in ("kg/train.txt", "kg/valid.txt", "kg/test.txt", "kg/entity_names.tsv", "sample.txt", "pool.tsv"):
            if name not in files:
                raise BundleImportError(f"{path}: {name} is missing")
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_bytes(files[name])
        try:
            with transaction.atomic():
                return _Import(path, work, files, dataset, written).run(as_name or dataset["name"])
        except (KeyError, TypeError, ValueError) as exc:
            _remove(written)
            raise BundleImportError(f"{path}: malformed bundle ({type(exc).__name__}: {exc})") from None
        except BaseException:
            _remove(written)
            raise


def _remove(written: list[str]) -> None:
    for relative in written:
        remove_file(relative)


class _Import:
    def __init__(self, path: Path, work: Path, files: dict[str, bytes], dataset: dict, written: list[str]):
        self.path, self.work, self.files, self.d, self.written = path, work, files, dataset, written
        self.report: BundleImportReport | None = None
        self.created: list[str] = []
        self.matched: list[str] = []

    def refuse(self, message: str) -> None:
        raise BundleImportError(f"{self.path}: {message}")

    def run(self, name: str) -> BundleImportReport:
        from pooling.services.names import checked_name

        checked_name("sample", name, BundleImportError)  # campaign names are slugs too
        if Campaign.objects.filter(name=name).exists():
            self.refuse(f"a campaign named {name!r} already exists here (import it with --as NEW_NAME)")
        kg = self.kg()
        sample = self.sample(kg)
        pool = self.pool(kg, sample, name)
        campaign = self.campaign(name, pool)
        report = BundleImportReport(campaign, self.created, self.matched)
        self.records(campaign, report)
        self.reusability(name)
        return report

    # ------------------------------------------------------------------------------------------- KG
    def kg(self) -> KnowledgeGraph:
        from pooling.engine.kgfiles import KGFormatError
        from pooling.selectors.kg import kg_relation_keys, kg_triples
        from pooling.selectors.pools import entity_keys
        from pooling.services.kg_import import KGImportError, import_kg

        wanted = self.d["kg"]
        kg = KnowledgeGraph.objects.filter(name=wanted["name"]).first()
        if kg is None:
            try:
                kg = import_kg(wanted["name"], self.work / "kg")
            except (KGFormatError, KGImportError) as exc:
                self.refuse(f"kg/: {exc}")
            self.written.append(kg.arrays_file)
            self.created.append(f"knowledge graph {kg.name}")
            return kg
        keys, relations, arrays = entity_keys(kg), kg_relation_keys(kg), kg_triples(kg)
        for split in ("train", "valid", "test"):
            here = "".join(f"{keys[h]}\t{relations[r]}\t{keys[t]}\n" for h, r, t in arrays[split].tolist()).encode()
            if here != self.files[f"kg/{split}.txt"]:
                self.refuse(f"knowledge graph {kg.name} exists here with another {split} split")
        self.matched.append(f"knowledge graph {kg.name}")
        return kg

    def sample(self, kg: KnowledgeGraph) -> Sample:
        from pooling.selectors.pools import sample_test_indices
        from pooling.services.samples import SampleError, create_sample, read_sample_file

        wanted = self.d["sample"]
        try:
            indices = np.unique(read_sample_file(kg, self.work / "sample.txt"))
        except SampleError as exc:
            self.refuse(f"sample.txt: {exc}")
        sample = Sample.objects.filter(kg=kg, name=wanted["name"]).first()
        if sample is not None:
            if not np.array_equal(sample_test_indices(sample), indices):
                self.refuse(f"sample {sample.name} exists here with other test triples")
            self.matched.append(f"sample {sample.name}")
            return sample
        self.created.append(f"sample {wanted['name']}")
        return create_sample(kg, name=wanted["name"], method=wanted["method"], seed=wanted["seed"], indices=indices,
                             source=str(self.path)[:500])

    def pool(self, kg: KnowledgeGraph, sample: Sample, campaign_name: str) -> Pool:
        from pooling.selectors.pools import pool_export_rows
        from pooling.services.pools import PoolError, import_pool

        wanted = self.d["pool"]
        existing = Pool.objects.filter(sample=sample, name=wanted["name"]).first()
        if existing is not None:
            rows = "".join(f"{h}\t{r}\t{t}\t{'-' if d is None else d}\t{','.join(s) or '-'}\n"
                           for h, r, t, d, s in sorted(pool_export_rows(existing))).encode()
            if rows == self.files["pool.tsv"] and existing.depth == wanted["depth"]:
                self.matched.append(f"pool {existing.name}")
                return existing
            if Pool.objects.filter(sample=sample, name=campaign_name).exists():
                self.refuse(f"pool {wanted['name']} exists here with other candidates")
            name = campaign_name
        else:
            name = wanted["name"]
        before = set(System.objects.filter(kg=kg).values_list("name", flat=True))
        try:
            pool, _counts = import_pool(kg, self.work / "pool.tsv", self.work / "sample.txt", name=name,
                                        sample_name=sample.name, depth=wanted["depth"])
        except PoolError as exc:
            self.refuse(str(exc).replace(str(self.work) + "/", ""))
        architectures = {s["name"]: s["architecture"] for s in wanted["systems"]}
        for system in pool.systems.exclude(name__in=before):
            System.objects.filter(pk=system.pk).update(architecture=architectures.get(system.name, ""),
                                                       config={"bundle": str(self.path)})
        self.created.append(f"pool {pool.name}")
        return pool

    def campaign(self, name: str, pool: Pool) -> Campaign:
        from annotation.services.campaigns import create_campaign

        settings = self.d["campaign"]
        campaign = create_campaign(name, pool, description=self.d.get("description", ""),
                                   allowed_domains=settings["allowed_domains"], reuse=False)
        Campaign.objects.filter(pk=campaign.pk).update(
            judgments_per_item=settings["judgments_per_item"], judging_order=settings["judging_order"],
            item_budget=settings["item_budget"])
        campaign.refresh_from_db()
        self.created.append(f"campaign {name}")
        return campaign

    # -------------------------------------------------------------------------------------- records
    def users(self, campaign: Campaign, records: list[dict]) -> dict[str, int]:
        """Pseudonym -> account, created in pseudonym order (the export numbers people by account age)."""
        names = {j["annotator"] for r in records for j in r["judgments"]}
        names |= {r["adjudication"]["adjudicator"] for r in records if r["adjudication"]}
        User = get_user_model()
        accounts = {}
        for pseudonym in sorted(names, key=lambda n: (len(n), n)):
            username = f"{campaign.name}-{pseudonym}"
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User.objects.create_user(username, is_active=False)  # no usable password
                self.created.append(f"user {username}")
            accounts[pseudonym] = user.pk
        return accounts

    def records(self, campaign: Campaign, report: BundleImportReport) -> None:
        lines = self.files.get("judgments.jsonl", b"").decode("utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        users = self.users(campaign, records)
        items = {(h, r, t): item for item, h, r, t in (
            (i, i.head.key, i.relation.key, i.tail.key)
            for i in Item.objects.filter(campaign=campaign, is_gold=False).select_related("head", "relation", "tail"))}
        judgments, adjudications, answers = [], [], defaultdict(list)
        for number, record in enumerate(records, start=1):
            item = items.get((record["head"], record["relation"], record["tail"]))
            if item is None:
                self.refuse(f"judgments.jsonl:{number}: ({record['head']}, {record['relation']}, {record['tail']}) "
                            "is not a pooled candidate (pool.tsv)")
            for j in record["judgments"]:
                judgments.append(Judgment(item=item, user_id=users[j["annotator"]], answer=j["answer"],
                                          source_url=j["source_url"], source_domain=j["source_domain"],
                                          quote=j["quote"], given_at=datetime.fromisoformat(j["given_at"]),
                                          time_on_task_ms=j["time_on_task_ms"]))
                answers[item.pk].append(j["answer"])
            a = record["adjudication"]
            if a:
                adjudications.append(Adjudication(item=item, adjudicator_id=users[a["adjudicator"]], label=a["label"],
                                                  reason=a["reason"], decided_at=datetime.fromisoformat(a["decided_at"])))
            self.settle(item, record, answers[item.pk], a["label"] if a else None, campaign.judgments_per_item, number)
        with transaction.atomic():
            Judgment.objects.bulk_create(judgments, batch_size=BATCH)
            Adjudication.objects.bulk_create(adjudications, batch_size=BATCH)
            LabelVersion.objects.bulk_create([_version(j) for j in judgments] + [_version(a) for a in adjudications],
                                             batch_size=BATCH)
            Item.objects.bulk_update(list(items.values()), ["status", "label", "label_origin", "rule", "flags",
                                                            "num_judgments", "num_active"], batch_size=BATCH)
        report.judgments, report.adjudications = len(judgments), len(adjudications)
        report.labels = sum(1 for r in records if r["label"])

    def settle(self, item: Item, record: dict, answers: list[str], adjudication: str | None, per_item: int,
               number: int) -> None:
        """The item's stored decisions from the record, then its state derived from all its facts."""
        origin, label = record["origin"] or "", record["label"] or ""
        item.flags, item.rule = list(record["flags"]), record["rule"] or ""
        stored = {Item.Origin.RULE: Item.Status.AUTO_NEGATIVE, Item.Origin.IMPORTED: Item.Status.IMPORTED,
                  Item.Origin.REUSED: Item.Status.IMPORTED}.get(origin, Item.Status.PENDING)
        keeps = origin in (Item.Origin.RULE, Item.Origin.IMPORTED, Item.Origin.REUSED, Item.Origin.AUDIT,
                           Item.Origin.EXPERT)
        item.status, item.label, item.label_origin = stored, label if keeps else "", origin if keeps else ""
        state = derive_item_state(ItemFacts(
            is_gold=False, judgments_per_item=per_item, answers=tuple(answers), open_handouts=0,
            adjudication=adjudication, flagged=bool(item.flags), stored_status=item.status,
            stored_label=item.label, stored_origin=item.label_origin))
        if label and (state.label, state.origin) != (label, origin):
            self.refuse(f"judgments.jsonl:{number}: its judgments give {state.label or 'no label'} "
                        f"({state.origin or state.status}), the record says {label} ({origin})")
        item.status, item.label, item.label_origin = state.status, state.label, state.origin
        item.num_judgments, item.num_active = state.num_judgments, state.num_active
        if state.origin not in (Item.Origin.RULE, Item.Origin.REUSED):
            item.rule = "" if state.origin != Item.Origin.IMPORTED else item.rule

    def reusability(self, name: str) -> None:
        from evaluation.services.reusability import result_path

        data = self.files.get("reusability.json")
        target = result_path(name)
        if data is not None and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _version(subject: Judgment | Adjudication) -> LabelVersion:
    """The ``submit`` version of a label created by the import (what ``label_history.record_submitted`` writes)."""
    if isinstance(subject, Judgment):
        return LabelVersion(item_id=subject.item_id, kind=LabelVersion.Kind.JUDGMENT, judgment=subject,
                            author_id=subject.user_id, changed_by_id=subject.user_id, changed_at=subject.given_at,
                            reason=LabelVersion.Reason.SUBMIT, new_answer=subject.answer,
                            new_source_url=subject.source_url, new_text=subject.quote)
    return LabelVersion(item_id=subject.item_id, kind=LabelVersion.Kind.ADJUDICATION, adjudication=subject,
                        author_id=subject.adjudicator_id, changed_by_id=subject.adjudicator_id,
                        changed_at=subject.decided_at, reason=LabelVersion.Reason.SUBMIT, new_answer=subject.label,
                        new_text=subject.reason)
