"""Judging campaigns (SPEC 4): campaigns, roles, items to judge, hand-outs, judgments and adjudications.

Locking rule used by every service that writes here: an :class:`Item` row lock guards the item's counters,
its assignments, judgments and adjudication. A transaction that changes any of them first locks the item
(``select_for_update``) and never waits for a second item while holding one, so writers cannot deadlock.

People's labels are the product: judgments, adjudications and expert reviews (and their history,
:class:`LabelVersion`) are PROTECTed, and so is every user who was handed work. Deleting anything they hang
from (a user, campaign, pool, sample, KG, entity, relation, item) is refused while they exist; a campaign
leaves only through ``archive_campaign`` (a verified backup first), a user is deactivated instead
(``services/users.deactivate_user``). An item's status, label, origin and counters are derived from its
facts (``services/item_state.recompute_item``).
"""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.lib.evidence import DEFAULT_EVIDENCE_POLICY, EVIDENCE_CHOICES
from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, Relation

DEFAULT_ALLOWED_DOMAINS = ["wikipedia.org", "wikidata.org", "imdb.com", "allmusic.com"]


def default_allowed_domains() -> list[str]:
    return list(DEFAULT_ALLOWED_DOMAINS)


class Label(models.TextChoices):
    YES = "Y", "yes"
    NO = "N", "no"


class Answer(models.TextChoices):
    """An annotator's answer: a label, or "can't tell" (the item then goes to adjudication with the annotator's
    comment, ``annotation.lib.item_state``). Final labels, gold answers and adjudications are ``Label`` only."""

    YES = "Y", "yes"
    NO = "N", "no"
    CANT_TELL = "C", "can't tell"


JUDGING_ORDERS = [
    ("random", "random (shuffled)"),
    ("depth", "pool depth"),
    ("move_to_front", "move-to-front (Cormack et al. 1998)"),
    ("maxmean", "MaxMean bandit, one for the pool (Losada et al. 2016)"),
    ("maxmean_question", "MaxMean bandit, one per question"),
    ("kg_aware", "KG-aware estimate (systems, relation, question's answers)"),
    ("cal", "continuous active learning (logistic regression re-trained on the labels)"),
    ("cal_top", "continuous active learning, every system's top candidates first"),
    ("cal_mix", "continuous active learning with a share of depth order"),
]


class Campaign(models.Model):
    """Judging of one pool: who judges, which sources count, how work is handed out."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="campaigns")
    allowed_domains = models.JSONField(
        default=default_allowed_domains, blank=True,
        help_text="Verified source domains; a source URL must be on one of them or a subdomain (JSON list)",
    )
    judgments_per_item = models.PositiveSmallIntegerField(default=2, editable=False)
    assignment_timeout_s = models.PositiveIntegerField(
        default=1800, help_text="Seconds after which an unanswered hand-out returns to the queue"
    )
    gold_rate = models.FloatField(default=0.05, help_text="Share of gold (known-answer) checks mixed into the queue")
    rushed_factor = models.FloatField(
        default=0.25, help_text="A judgment faster than this factor x the campaign's median time on task is flagged rushed"
    )
    gold_threshold = models.FloatField(
        default=0.8, help_text="Annotators whose accuracy on gold checks is under this share are listed in a warning"
    )
    judging_order = models.CharField(
        max_length=20, default="random", choices=JUDGING_ORDERS,
        help_text="Which items people judge first (issue 20); an adaptive order re-keys the queue as labels become final",
    )
    item_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="Stop handing out new pool items once this many have been started (blank: no budget)"
    )
    order_rewards = models.PositiveIntegerField(
        default=0, editable=False, help_text="Final labels the queue order was last computed from"
    )
    evidence_policy = models.CharField(
        max_length=5, default=DEFAULT_EVIDENCE_POLICY, choices=EVIDENCE_CHOICES,
        help_text="For which answers a source URL is required (a source given is always checked)",
    )
    guidelines = models.TextField(blank=True, help_text="Campaign-wide judging guidelines (Markdown), shown beside "
                                                        "every question")
    relation_guidelines = models.JSONField(
        default=dict, blank=True, help_text='Guidelines per relation (Markdown): {"relation key": "text"}'
    )
    evaluate_when_done = models.BooleanField(
        default=False, editable=False,
        help_text="Start the evaluation its campaign file declares once the last item is decided (campaign apply)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="campaigns")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    ADMIN = "admin", "admin"
    ANNOTATOR = "annotator", "annotator"
    ADJUDICATOR = "adjudicator", "adjudicator"
    EXPERT = "expert", "expert"


class Membership(models.Model):
    """A user's role in a campaign (one row per role)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships", db_index=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="campaign_memberships")
    role = models.CharField(max_length=12, choices=Role.choices)
    added_at = models.DateTimeField(auto_now_add=True)
    guidelines_read = models.CharField(
        max_length=64, blank=True, help_text="Digest of the guidelines the member confirmed reading ('' : none yet)"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "user", "role"], name="membership_unique_role")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} in {self.campaign}"


class Item(models.Model):
    """One triple to judge in a campaign: a pool entry, or a gold check (``entry`` null, ``is_gold``)."""

    class Status(models.TextChoices):
        AUTO_NEGATIVE = "auto_negative", "auto negative (rule)"
        PENDING = "pending", "pending"
        IN_PROGRESS = "in_progress", "in progress"
        AGREED = "agreed", "agreed"
        CONFLICT = "conflict", "conflict (to adjudicate)"
        ADJUDICATED = "adjudicated", "adjudicated"
        IMPORTED = "imported", "labelled elsewhere (imported / reused)"

    class Origin(models.TextChoices):
        UNANIMOUS = "unanimous", "unanimous"
        ADJUDICATED = "adjudicated", "adjudicated"
        RULE = "rule", "rule"
        EXPERT = "expert", "expert (legacy; expert labels are now applied with origin audit)"
        REUSED = "reused", "reused"
        IMPORTED = "imported", "imported"
        AUDIT = "audit", "audit (expert majority)"

    # campaign and entry: no index of their own, the composite ones below lead with them (each write of an item
    # updates every index of the table: the claim and the submit update an item per request, issue 21)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items", db_index=False)
    entry = models.ForeignKey(PoolEntry, on_delete=models.CASCADE, null=True, blank=True, related_name="items",
                              db_index=False)
    head = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+", db_index=False)
    tail = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.PENDING)
    label = models.CharField(max_length=1, choices=Label.choices, blank=True, help_text="Final label; blank until decided")
    label_origin = models.CharField(max_length=12, choices=Origin.choices, blank=True)
    rule = models.CharField(max_length=100, blank=True, help_text="Trivial-filter rule(s) that fired, e.g. cardinality")
    # Counters guarded by the item's row lock: judgments given, and judgments + open hand-outs.
    num_judgments = models.PositiveSmallIntegerField(default=0)
    num_active = models.PositiveSmallIntegerField(default=0)
    queue_key = models.PositiveIntegerField(default=0, help_text="Random order of the queue (gold items blend in)")
    is_gold = models.BooleanField(default=False)
    gold_answer = models.CharField(max_length=1, choices=Label.choices, blank=True)
    flags = models.JSONField(default=list, blank=True, help_text="Consistency flags that routed the item to adjudication")
    reused_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The item of an earlier campaign whose final label this one reuses (origin reused)",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "head", "relation", "tail"], name="item_unique_triple"),
            models.CheckConstraint(condition=Q(is_gold=False) | ~Q(gold_answer=""), name="item_gold_has_answer"),
        ]
        indexes = [
            models.Index(fields=["campaign", "status", "num_active", "queue_key"], name="item_queue"),
            # the hand-out order of the items still in the queue (next_item walks it and stops at the first free)
            models.Index(fields=["campaign", "queue_key", "id"], name="item_queue_order",
                         condition=Q(status__in=["pending", "in_progress"])),
            models.Index(fields=["entry"], name="item_entry"),
            # the entity lookups of PostgreSQL's foreign-key checks when entities are deleted (pooling.PoolEntry)
            models.Index(fields=["head"], name="item_head"),
            models.Index(fields=["tail"], name="item_tail"),
            # every count the campaign pages show (selectors/item_counts) and the final labels in the order they
            # became final (selectors/judging_progress), from this index alone, never the table (issue 18)
            models.Index(fields=["campaign", "is_gold", "status", "label_origin", "gold_answer", "flags", "updated_at",
                                 "id", "entry", "label"], name="item_counts"),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} ({self.head_id}, {self.relation_id}, {self.tail_id}) {self.status}"


class Assignment(models.Model):
    """An item handed to a user, to judge (``kind`` judge) or to adjudicate. Never twice to the same user."""

    class Kind(models.TextChoices):
        JUDGE = "judge", "judge"
        ADJUDICATE = "adjudicate", "adjudicate"

    class State(models.TextChoices):
        OPEN = "open", "open"
        DONE = "done", "answered"
        SKIPPED = "skipped", "skipped"
        EXPIRED = "expired", "expired"
        CANCELLED = "cancelled", "cancelled"

    # item and user: no index of their own, assignment_once_per_user and assignment_user_state lead with them
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    # PROTECT: deleting a user with hand-outs left their items' counters counting ghosts (deactivate instead)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments",
                             db_index=False)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.JUDGE)
    state = models.CharField(max_length=9, choices=State.choices, default=State.OPEN)
    handed_out_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "user", "kind"], name="assignment_once_per_user")]
        indexes = [
            models.Index(fields=["user", "state"], name="assignment_user_state"),
            models.Index(fields=["state", "expires_at"], name="assignment_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} item {self.item_id} -> {self.user} ({self.state})"


class ActiveJudgmentManager(models.Manager):
    """The judgments that count: withdrawn ones (undone by their author) left out. Every reader of answers
    (item state, agreement, exports, quality) goes through this default manager; ``Judgment.all_objects`` also
    has the withdrawn ones (backups, the history, the person's own recent answers)."""

    def get_queryset(self):
        return super().get_queryset().filter(withdrawn_at__isnull=True)


class Judgment(models.Model):
    """One annotator's answer (Y, N or can't tell) with its evidence. At most one active per (item, user);
    ``request_id`` makes retries safe. Undo (``services/undo``) withdraws a judgment: the row stays, with
    ``withdrawn_at`` set and a history version saying so, and no longer counts anywhere."""

    objects = ActiveJudgmentManager()
    all_objects = models.Manager()

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="judgments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments")
    assignment = models.OneToOneField(Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="judgment")
    answer = models.CharField(max_length=1, choices=Answer.choices)
    source_url = models.URLField(max_length=2000, blank=True,
                                 help_text="Normalised: lower-case host, no fragment; empty when the campaign's "
                                           "evidence policy did not require one and none was given")
    source_domain = models.CharField(max_length=255, blank=True, help_text="The allow-listed domain the URL matched")
    quote = models.TextField(blank=True, help_text="The supporting quote; with can't tell, the annotator's comment "
                                                   "(required then)")
    given_at = models.DateTimeField()
    # Measured on the server, from the hand-out to the answer (what the rushed-answer check reads); the client's
    # own figure is only a hint, clamped to the server's (a client can send anything).
    time_on_task_ms = models.PositiveIntegerField(null=True, blank=True)
    client_time_ms = models.PositiveIntegerField(null=True, blank=True, help_text="The client's time on task (hint)")
    request_id = models.CharField(max_length=100, blank=True, help_text="Client id of the request (idempotent retries)")
    withdrawn_at = models.DateTimeField(null=True, blank=True,
                                        help_text="When its author undid it (it no longer counts); blank: active")

    class Meta:
        ordering = ["item", "given_at", "id"]
        base_manager_name = "all_objects"  # a label version's judgment is found even when withdrawn
        constraints = [
            models.UniqueConstraint(fields=["item", "user"], condition=Q(withdrawn_at__isnull=True),
                                    name="judgment_once_per_user"),
            models.UniqueConstraint(
                fields=["user", "request_id"], condition=~Q(request_id="") & Q(withdrawn_at__isnull=True),
                name="judgment_unique_request",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.answer} on item {self.item_id}"


class Adjudication(models.Model):
    """The final label of a conflict, by a third person who judged neither side."""

    item = models.OneToOneField(Item, on_delete=models.PROTECT, related_name="adjudication")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications")
    label = models.CharField(max_length=1, choices=Label.choices)
    reason = models.TextField()
    decided_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.label} on item {self.item_id} by {self.adjudicator}"


class ExpertReview(models.Model):
    """An expert's blind relabel of an item in the audit sample (SPEC 4.2)."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="expert_reviews", db_index=False)
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="expert_reviews")
    label = models.CharField(max_length=1, choices=Label.choices, blank=True, help_text="Blank until the expert answers")
    comment = models.TextField(blank=True)
    given_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "expert"], name="expert_review_once")]


class LabelVersion(models.Model):
    """Append-only history of people's labels: one row per creation or change of a judgment, an adjudication or
    an expert review's label, with who and when, the old and the new answer and evidence, and why.

    Rows are never updated or deleted (``save`` of an existing row and ``delete`` raise; the admin shows them
    read-only). Evidence: the source URL (judgments) and a text: the quote (judgments), the reason
    (adjudications) or the comment (expert reviews).
    """

    class Kind(models.TextChoices):
        JUDGMENT = "judgment", "judgment"
        ADJUDICATION = "adjudication", "adjudication"
        EXPERT = "expert", "expert label"

    class Reason(models.TextChoices):
        SUBMIT = "submit", "submitted"
        ADMIN_EDIT = "admin_edit", "changed by an admin"
        UNDO = "undo", "withdrawn by its author (undo)"
        INITIAL = "initial", "state when the history began"

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="label_versions")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # the nullable references are indexed where set only (Meta.indexes): a version names one subject, and a row
    # written skips the indexes of the other two (and of changed_by when a program wrote it)
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, null=True, blank=True, related_name="versions",
                                 db_index=False)
    adjudication = models.ForeignKey(Adjudication, on_delete=models.PROTECT, null=True, blank=True,
                                     related_name="versions", db_index=False)
    expert_review = models.ForeignKey(ExpertReview, on_delete=models.PROTECT, null=True, blank=True,
                                      related_name="versions", db_index=False)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                               help_text="Whose label it is: the annotator, adjudicator or expert")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="+", help_text="Who made this change (blank: a program)",
                                   db_index=False)
    changed_at = models.DateTimeField()
    reason = models.CharField(max_length=12, choices=Reason.choices)
    note = models.TextField(blank=True, help_text="Why the change was made (required for admin edits)")
    old_answer = models.CharField(max_length=1, choices=Answer.choices, blank=True)
    new_answer = models.CharField(max_length=1, choices=Answer.choices, blank=True)
    old_source_url = models.CharField(max_length=2000, blank=True)
    new_source_url = models.CharField(max_length=2000, blank=True)
    old_text = models.TextField(blank=True)
    new_text = models.TextField(blank=True)

    class Meta:
        ordering = ["item", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(kind="judgment", judgment__isnull=False, adjudication__isnull=True, expert_review__isnull=True)
                    | Q(kind="adjudication", judgment__isnull=True, adjudication__isnull=False, expert_review__isnull=True)
                    | Q(kind="expert", judgment__isnull=True, adjudication__isnull=True, expert_review__isnull=False)
                ),
                name="label_version_one_subject",
            ),
        ]
        indexes = [
            models.Index(fields=[name], name=f"version_{name}", condition=Q(**{f"{name}__isnull": False}))
            for name in ("judgment", "adjudication", "expert_review", "changed_by")
        ]

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ValueError("label versions are append-only: record a new version instead of changing one")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("label versions are append-only and cannot be deleted")

    def __str__(self) -> str:
        return f"{self.kind} of item {self.item_id}: {self.old_answer or '-'} -> {self.new_answer or '-'} ({self.reason})"


class AuditItem(models.Model):
    """One item of a campaign's expert-audit sample (SPEC 4.2), drawn stratified by final label. The final
    label and its origin are kept as they were when drawn, so the audit report does not move if expert labels
    are later applied."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="audit_items", db_index=False)
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="audit")
    position = models.PositiveIntegerField(help_text="Order in which experts are served the sample (shuffled)")
    final_label = models.CharField(max_length=1, choices=Label.choices)
    final_origin = models.CharField(max_length=40, help_text="Origin of the final label when drawn, e.g. rule:type")
    seed = models.IntegerField(default=0)
    drawn_at = models.DateTimeField()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [models.UniqueConstraint(fields=["campaign", "position"], name="audit_item_position")]

    def __str__(self) -> str:
        return f"audit #{self.position} item {self.item_id} ({self.final_label})"


class QuestionTemplate(models.Model):
    """How a triple of ``relation`` reads as a yes/no question: ``{head}`` and ``{tail}`` are the entity names.

    ``campaign`` null: the KG-level default (one per relation); else a campaign's override.
    """

    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="question_templates")
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="question_templates")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, null=True, blank=True, related_name="templates",
                                 db_index=False)
    text = models.CharField(max_length=500)
    is_generated = models.BooleanField(default=True, help_text="Written by the default generator, not by a person")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["relation"], condition=Q(campaign__isnull=True), name="template_kg_default"),
            models.UniqueConstraint(fields=["campaign", "relation"], name="template_campaign_override"),
        ]

    def __str__(self) -> str:
        return self.text


def new_request_id() -> str:
    return uuid.uuid4().hex


class CampaignFile(models.Model):
    """The campaign file (TOML, ``annotation.lib.campaign_file``) last applied to a campaign with ``campaign apply``.

    ``campaign export`` writes the campaign from the database and takes from here what the database does not hold:
    the KG's metadata files, the filter options, the import options of systems and the evaluation to run when
    judging is done."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="campaign_file")
    spec = models.JSONField(default=dict, help_text="The applied file, checked and with absolute paths (JSON)")
    path = models.CharField(max_length=1000, blank=True, help_text="Where the file was read from")
    applied_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"campaign file of {self.campaign}"
