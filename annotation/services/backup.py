"""Writes: a campaign's portable backup (``backup_format``): everything needed to restore it into an empty
instance: the KG (rows and arrays), the sample, the pool's systems and their rankings on the sample (arrays),
the pool, the campaign with its members, templates, items, hand-outs, judgments, adjudications, expert reviews,
audit sample and label history, and the users they name (no passwords, no tokens, no staff flags).

Not included: trained checkpoints (re-rank from the rankings, or keep the checkpoint files), pool build
chunks, evaluation runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connections, router, transaction
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Assignment,
    AuditItem,
    Campaign,
    ExpertReview,
    Item,
    Judgment,
    LabelVersion,
    Membership,
    QuestionTemplate,
)
from annotation.services import backup_format as fmt
from pooling.models import Entity, Pool, PoolEntry, PoolHit, Question, Ranking, Relation, SampleTriple, System
from pooling.storage import load_arrays


@dataclass
class BackupReport:
    path: Path
    rows: dict[str, int] = field(default_factory=dict)  # member -> rows (JSONL tables)
    arrays: int = 0

    def summary(self) -> str:
        main = ", ".join(f"{self.rows.get(f'{name}.jsonl', 0):,} {name}" for name in
                         ("items", "judgments", "adjudications", "expert_reviews", "label_versions"))
        return f"{main}, {self.arrays} arrays"


def backup_campaign(campaign: Campaign, path: Path | str) -> BackupReport:
    """Write the campaign's backup to ``path`` (atomically); returns what it holds."""
    members = campaign_members(campaign)
    fmt.write_archive(Path(path), members, {"campaign": campaign.name, "created_at": timezone.now().isoformat()})
    report = BackupReport(Path(path), arrays=sum(1 for name in members if name.endswith(".npy")))
    for name, data in members.items():
        if name.endswith(".jsonl"):
            report.rows[name] = data.count(b"\n")
    return report


def campaign_members(campaign: Campaign) -> dict[str, bytes]:
    """The archive's members, read in one snapshot (REPEATABLE READ on PostgreSQL, the write lock on SQLite)."""
    connection = connections[router.db_for_read(Campaign)]
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=connection.alias):
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        campaign = Campaign.objects.select_related("pool__sample__kg").get(pk=campaign.pk)
        return TableWriter(campaign.pool, campaign).members()


class TableWriter:
    """The archive's tables of a pool (and of a campaign on it) as member bytes, in ``out``. Restores use the
    pool-level ones to compare an existing sample or pool with the archive's."""

    def __init__(self, pool: Pool, campaign: Campaign | None = None):
        self.campaign = campaign
        self.pool = pool
        self.sample = pool.sample
        self.kg = self.sample.kg
        self.out: dict[str, bytes] = {}
        self.entity = dict(Entity.objects.filter(kg=self.kg).values_list("pk", "key"))
        self.relation = dict(Relation.objects.filter(kg=self.kg).values_list("pk", "key"))
        self.usernames: dict[int, str] = {}

    def triple(self, h: int, r: int, t: int) -> list[str]:
        return [self.entity[h], self.relation[r], self.entity[t]]

    def user(self, pk: int | None) -> str | None:
        if pk is None:
            return None
        if pk not in self.usernames:
            self.usernames[pk] = get_user_model().objects.get(pk=pk).get_username()
        return self.usernames[pk]

    def members(self) -> dict[str, bytes]:
        self.knowledge_graph()
        self.sample_and_questions()
        self.systems()
        self.rankings()
        self.pool_entries()
        self.campaign_rows()
        self.users()
        return self.out

    def knowledge_graph(self) -> None:
        arrays = load_arrays(self.kg.arrays_file)
        self.out["kg.json"] = fmt.dump_json({**fmt.encode_row(self.kg, fmt.KG_FIELDS), "arrays": sorted(arrays)})
        for name, array in arrays.items():
            self.out[f"arrays/kg/{name}.npy"] = fmt.dump_array(array)
        self.out["entities.jsonl"] = fmt.dump_jsonl(
            fmt.encode_row(e, fmt.ENTITY_FIELDS) for e in Entity.objects.filter(kg=self.kg).order_by("index"))
        self.out["relations.jsonl"] = fmt.dump_jsonl(
            fmt.encode_row(r, fmt.RELATION_FIELDS) for r in Relation.objects.filter(kg=self.kg).order_by("index"))

    def sample_and_questions(self) -> None:
        self.out["sample.json"] = fmt.dump_json(fmt.encode_row(self.sample, fmt.SAMPLE_FIELDS))
        position_of = {}
        rows = []
        for st in SampleTriple.objects.filter(sample=self.sample).order_by("position"):
            position_of[st.pk] = st.position
            rows.append({**fmt.encode_row(st, fmt.SAMPLE_TRIPLE_FIELDS), "triple": self.triple(st.head_id, st.relation_id, st.tail_id)})
        self.out["sample_triples.jsonl"] = fmt.dump_jsonl(rows)
        members: dict[int, list[int]] = {}
        for question_id, triple_id in Question.triples.through.objects.filter(question__sample=self.sample) \
                .values_list("question_id", "sampletriple_id"):
            members.setdefault(question_id, []).append(position_of[triple_id])
        self.out["questions.jsonl"] = fmt.dump_jsonl(
            {**fmt.encode_row(q, fmt.QUESTION_FIELDS), "anchor": self.entity[q.anchor_id],
             "relation": self.relation[q.relation_id], "triples": sorted(members.get(q.pk, []))}
            for q in Question.objects.filter(sample=self.sample).order_by("position"))

    def systems(self) -> None:
        """The pool's systems (and any its hits name)."""
        system_ids = set(self.pool.systems.values_list("pk", flat=True))
        system_ids |= set(PoolHit.objects.filter(entry__pool=self.pool, system__isnull=False)
                          .values_list("system_id", flat=True).distinct())
        systems = sorted(System.objects.filter(pk__in=system_ids), key=lambda s: s.name)
        self.system_name = {s.pk: s.name for s in systems}
        self.out["systems.jsonl"] = fmt.dump_jsonl(fmt.encode_row(s, fmt.SYSTEM_FIELDS) for s in systems)

    def rankings(self) -> None:
        """The rankings of the pool's systems on the sample, with their arrays."""
        rows = []
        for ranking in sorted(Ranking.objects.filter(sample=self.sample, system_id__in=list(self.system_name)),
                               key=lambda r: self.system_name[r.system_id]):
            name = self.system_name[ranking.system_id]
            arrays = load_arrays(ranking.ranking_file)
            for array_name, array in arrays.items():
                self.out[f"arrays/rankings/{name}/{array_name}.npy"] = fmt.dump_array(array)
            rows.append({**fmt.encode_row(ranking, fmt.RANKING_FIELDS), "system": name, "arrays": sorted(arrays)})
        self.out["rankings.jsonl"] = fmt.dump_jsonl(rows)

    def pool_entries(self) -> None:
        self.out["pool.json"] = fmt.dump_json({**fmt.encode_row(self.pool, fmt.POOL_FIELDS),
                                               "systems": sorted(self.system_name[pk] for pk in
                                                                 self.pool.systems.values_list("pk", flat=True))})
        entries = sorted(
            ((self.triple(e.head_id, e.relation_id, e.tail_id), e) for e in PoolEntry.objects.filter(pool=self.pool)),
            key=lambda pair: (pair[0], pair[1].pk))
        self.entry_line = {e.pk: n for n, (_triple, e) in enumerate(entries)}
        self.out["pool_entries.jsonl"] = fmt.dump_jsonl(
            {**fmt.encode_row(e, fmt.POOL_ENTRY_FIELDS), "triple": triple} for triple, e in entries)
        qid = dict(Question.objects.filter(sample=self.sample).values_list("pk", "qid"))
        hits = sorted(
            ({"entry": self.entry_line[entry_id], "system": self.system_name.get(system_id), "question": qid[question_id],
              "rank": rank}
             for entry_id, system_id, question_id, rank, _pk in PoolHit.objects.filter(entry__pool=self.pool)
             .values_list("entry_id", "system_id", "question_id", "rank", "pk").order_by("pk")),
            key=lambda h: (h["entry"], h["system"] or "", h["question"]))
        self.out["pool_hits.jsonl"] = fmt.dump_jsonl(hits)

    def campaign_rows(self) -> None:
        campaign = self.campaign
        self.out["campaign.json"] = fmt.dump_json(fmt.encode_row(campaign, fmt.CAMPAIGN_FIELDS))
        self.out["memberships.jsonl"] = fmt.dump_jsonl(sorted(
            ({**fmt.encode_row(m, fmt.MEMBERSHIP_FIELDS), "user": self.user(m.user_id)}
             for m in Membership.objects.filter(campaign=campaign).order_by("pk")),
            key=lambda row: (row["user"], row["role"])))
        templates = QuestionTemplate.objects.filter(kg=self.kg, campaign__isnull=True) | \
            QuestionTemplate.objects.filter(campaign=campaign)
        self.out["templates.jsonl"] = fmt.dump_jsonl(sorted(
            ({**fmt.encode_row(t, fmt.TEMPLATE_FIELDS), "relation": self.relation[t.relation_id],
              "campaign": t.campaign_id is not None, "updated_by": self.user(t.updated_by_id)}
             for t in templates.order_by("pk")),
            key=lambda row: (row["campaign"], row["relation"])))
        items = sorted(Item.objects.filter(campaign=campaign).select_related("reused_from__campaign"),
                        key=lambda i: (self.triple(i.head_id, i.relation_id, i.tail_id), i.pk))
        line = {item.pk: n for n, item in enumerate(items)}
        self.out["items.jsonl"] = fmt.dump_jsonl(self.item_row(item) for item in items)
        assignments = sorted(Assignment.objects.filter(item__campaign=campaign),
                              key=lambda a: (line[a.item_id], self.user(a.user_id), a.kind, a.pk))
        assignment_line = {a.pk: n for n, a in enumerate(assignments)}
        self.out["assignments.jsonl"] = fmt.dump_jsonl(
            {**fmt.encode_row(a, fmt.ASSIGNMENT_FIELDS), "item": line[a.item_id], "user": self.user(a.user_id)}
            for a in assignments)
        subject_line: dict[str, dict[int, int]] = {}
        for kind, model, user_field, fields in (
            ("judgment", Judgment, "user_id", fmt.JUDGMENT_FIELDS),
            ("adjudication", Adjudication, "adjudicator_id", fmt.ADJUDICATION_FIELDS),
            ("expert", ExpertReview, "expert_id", fmt.EXPERT_REVIEW_FIELDS),
        ):
            manager = Judgment.all_objects if model is Judgment else model.objects  # undone answers too (history)
            rows = sorted(manager.filter(item__campaign=campaign),
                           key=lambda r, uf=user_field: (line[r.item_id], self.user(getattr(r, uf)), r.pk))
            subject_line[kind] = {r.pk: n for n, r in enumerate(rows)}
            encoded = []
            for r in rows:
                row = {**fmt.encode_row(r, fields), "item": line[r.item_id], "user": self.user(getattr(r, user_field))}
                if kind == "judgment":
                    row["assignment"] = assignment_line.get(r.assignment_id)
                encoded.append(row)
            self.out[fmt.VERSION_SUBJECT_TABLE[kind]] = fmt.dump_jsonl(encoded)
        self.out["audit_items.jsonl"] = fmt.dump_jsonl(
            {**fmt.encode_row(a, fmt.AUDIT_ITEM_FIELDS), "item": line[a.item_id]}
            for a in AuditItem.objects.filter(campaign=campaign).order_by("position"))
        versions = sorted(LabelVersion.objects.filter(item__campaign=campaign),
                           key=lambda v: (line[v.item_id], v.changed_at, v.pk))
        self.out["label_versions.jsonl"] = fmt.dump_jsonl(
            {**fmt.encode_row(v, fmt.LABEL_VERSION_FIELDS), "item": line[v.item_id],
             "subject": subject_line[v.kind][v.judgment_id or v.adjudication_id or v.expert_review_id],
             "author": self.user(v.author_id), "changed_by": self.user(v.changed_by_id)}
            for v in versions)

    def item_row(self, item: Item) -> dict:
        reused = item.reused_from
        return {
            **fmt.encode_row(item, fmt.ITEM_FIELDS), "triple": self.triple(item.head_id, item.relation_id, item.tail_id),
            "entry": item.entry_id is not None,
            "reused_from": None if reused is None else {
                "campaign": reused.campaign.name,
                "triple": self.triple(reused.head_id, reused.relation_id, reused.tail_id),
            },
        }

    def users(self) -> None:
        User = get_user_model()
        users = User.objects.filter(pk__in=list(self.usernames))
        self.out["users.jsonl"] = fmt.dump_jsonl(sorted(
            ({**fmt.encode_row(u, fmt.USER_FIELDS), "username": u.get_username()} for u in users),
            key=lambda row: row["username"]))
