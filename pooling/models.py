"""Knowledge graphs: entities, relations and triples with their split.

Triples are also kept as index arrays in a .npz file (see `KnowledgeGraph.arrays_file`): computation reads
those, the rows serve browsing, judging pages and foreign keys.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class Split(models.TextChoices):
    TRAIN = "train", "train"
    VALID = "valid", "valid"
    TEST = "test", "test"


class KnowledgeGraph(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True, help_text="Folder or URL the data came from")
    created_at = models.DateTimeField(auto_now_add=True)
    num_entities = models.PositiveIntegerField(default=0)
    num_relations = models.PositiveIntegerField(default=0)
    num_train = models.PositiveIntegerField(default=0)
    num_valid = models.PositiveIntegerField(default=0)
    num_test = models.PositiveIntegerField(default=0)
    # Relative to settings.STORAGE_DIR: index arrays train/valid/test of shape (n, 3).
    arrays_file = models.CharField(max_length=500, blank=True)
    # Labels of entity type ids (e.g. Wikidata Q-ids of CoDEx types), when the dataset has them.
    type_labels = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "knowledge graph"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Entity(models.Model):
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="entities", db_index=False)
    index = models.PositiveIntegerField(help_text="Position in the KG's arrays (0..E-1)")
    key = models.CharField(max_length=255, help_text="Identifier in the dataset, e.g. a Freebase mid")
    name = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    url = models.URLField(max_length=500, blank=True, help_text="External page, e.g. Wikipedia")
    wikidata_id = models.CharField(max_length=32, blank=True)
    types = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["kg", "index"], name="entity_unique_index"),
            models.UniqueConstraint(fields=["kg", "key"], name="entity_unique_key"),
        ]
        # the admin's search by exact name (kgpool.admin_paging): an index look-up, not a scan of millions
        indexes = [models.Index(fields=["kg", "name"], name="entity_name")]

    def __str__(self) -> str:
        return self.name


class Relation(models.Model):
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="relations", db_index=False)
    index = models.PositiveIntegerField()
    key = models.CharField(max_length=500)
    text = models.CharField(max_length=500, blank=True, help_text="Readable form of the relation")
    description = models.TextField(blank=True)
    domain_type = models.CharField(max_length=255, blank=True)
    range_type = models.CharField(max_length=255, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kg", "index"], name="relation_unique_index"),
            models.UniqueConstraint(fields=["kg", "key"], name="relation_unique_key"),
        ]

    def __str__(self) -> str:
        return self.key


class Triple(models.Model):
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="triples", db_index=False)
    head = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+", db_index=False)
    tail = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=5, choices=Split.choices)

    class Meta:
        # Composite indexes led by each foreign key: they serve the lookups by (head, relation), by the whole
        # triple (the consistency check of every "no" answer) and by (tail, relation), and the database's FK
        # checks on delete, without three extra single-column indexes.
        indexes = [
            models.Index(fields=["head", "relation", "tail"], name="triple_head_relation_tail"),
            models.Index(fields=["tail", "relation"], name="triple_tail_relation"),
            models.Index(fields=["relation"], name="triple_relation"),
            models.Index(fields=["kg", "split"], name="triple_split"),
        ]

    def __str__(self) -> str:
        return f"({self.head_id}, {self.relation_id}, {self.tail_id}) [{self.split}]"


# ---------------------------------------------------------------------------------------------------------
# Pooling: systems, samples, questions, rankings and pools (SPEC 2-3).
# Large arrays (checkpoints, rankings, per-chunk top-k) live in files under settings.STORAGE_DIR; the rows
# below reference them by relative path.


class System(models.Model):
    """A KGC model whose rankings are pooled and evaluated: trained here, or imported (run/score files)."""

    class Origin(models.TextChoices):
        TRAINED = "trained", "trained"
        IMPORTED = "imported", "imported"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        TRAINING = "training", "training"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="systems", db_index=False)
    name = models.SlugField(max_length=100)
    architecture = models.CharField(max_length=50, blank=True, help_text="transe, distmult, ... (blank for imported runs)")
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.TRAINED)
    config = models.JSONField(default=dict, blank=True, help_text="Training configuration, or where an import came from")
    checkpoint_file = models.CharField(max_length=500, blank=True, help_text="Relative to STORAGE_DIR (trained systems)")
    valid_mrr = models.FloatField(null=True, blank=True, help_text="Filtered MRR on the validation split")
    test_mrr = models.FloatField(null=True, blank=True, help_text="Filtered MRR on the full test split (trained systems)")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    # Who is training it (host:pid) and when that process last showed it was alive: a training whose process is
    # gone is stale and may be started again (services.systems).
    trainer = models.CharField(max_length=200, blank=True, help_text="host:pid of the process training it")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of that process")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kg", "name"]
        constraints = [models.UniqueConstraint(fields=["kg", "name"], name="system_unique_name")]

    def __str__(self) -> str:
        return f"{self.kg.name}/{self.name}"


class Sample(models.Model):
    """Test triples drawn for a campaign; each yields its head and its tail question."""

    class Method(models.TextChoices):
        UNIFORM = "uniform", "uniform (seeded)"
        STRATIFIED = "stratified", "stratified by relation (seeded)"
        FILE = "file", "from a file"

    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="samples", db_index=False)
    name = models.SlugField(max_length=100)
    method = models.CharField(max_length=10, choices=Method.choices)
    seed = models.IntegerField(null=True, blank=True)
    size = models.PositiveIntegerField()
    kl_divergence = models.FloatField(
        null=True, blank=True, help_text="KL(sample || full test set) of the relation distributions, natural log"
    )
    source = models.CharField(max_length=500, blank=True, help_text="File the sample was read from")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kg", "name"]
        constraints = [models.UniqueConstraint(fields=["kg", "name"], name="sample_unique_name")]

    def __str__(self) -> str:
        return f"{self.kg.name}/{self.name}"


class SampleTriple(models.Model):
    """One sampled test triple; ``test_index`` is its 0-based line in the KG's test split."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="triples", db_index=False)
    position = models.PositiveIntegerField(help_text="0..size-1, ascending test index")
    test_index = models.PositiveIntegerField()
    head = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+")
    tail = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["sample", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "position"], name="sample_triple_unique_position"),
            models.UniqueConstraint(fields=["sample", "test_index"], name="sample_triple_unique_index"),
        ]

    def __str__(self) -> str:
        return f"{self.sample} #{self.test_index}"


class Question(models.Model):
    """A head question (?, r, anchor) or tail question (anchor, r, ?) of a sample.

    Identical questions of several sampled triples are one question (``triples`` lists them all). ``qid`` is
    ``head<N>`` / ``tail<N>``, numbered by first appearance in the sample; ``position`` is the row of the
    question in every ranking of the sample (all head questions first, then all tail questions).
    """

    class Side(models.IntegerChoices):  # values equal pooling.engine.questions.HEAD / TAIL
        HEAD = 0, "head"
        TAIL = 1, "tail"

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="questions", db_index=False)
    qid = models.CharField(max_length=20)
    position = models.PositiveIntegerField()
    side = models.PositiveSmallIntegerField(choices=Side.choices)
    anchor = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+")
    triples = models.ManyToManyField(SampleTriple, related_name="questions", help_text="Sampled triples asking it")

    class Meta:
        ordering = ["sample", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "qid"], name="question_unique_qid"),
            models.UniqueConstraint(fields=["sample", "position"], name="question_unique_position"),
            models.UniqueConstraint(fields=["sample", "side", "relation", "anchor"], name="question_unique_question"),
        ]

    def __str__(self) -> str:
        return f"{self.sample}:{self.qid}"


class Ranking(models.Model):
    """A system's filtered top-k and target ranks on a sample's questions (a RankingResult .npz file).

    Rows of the arrays follow ``Question.position``; targets are the sample's answers of each question.
    """

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="rankings", db_index=False)
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="rankings")
    k = models.PositiveIntegerField()
    filter = models.CharField(max_length=200, default="train+valid+test", help_text="Known triples removed from the candidates")
    ranking_file = models.CharField(max_length=500)
    scores_file = models.CharField(
        max_length=500, blank=True,
        help_text="Imported systems: the scores as given (score matrix or run entries), relative to STORAGE_DIR; "
                  "evaluation ranks from it exactly like a trained model",
    )
    mrr = models.FloatField(null=True, blank=True, help_text="Filtered MRR of the sample's answers (realistic ties)")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["sample", "system"]
        constraints = [models.UniqueConstraint(fields=["system", "sample"], name="ranking_unique_system_sample")]

    def __str__(self) -> str:
        return f"{self.system.name} on {self.sample.name} (top-{self.k})"


class Pool(models.Model):
    """The union of the systems' filtered top-k candidates over a sample's questions (depth k)."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    class Origin(models.TextChoices):
        BUILT = "built", "built here"
        IMPORTED = "imported", "imported"

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="pools", db_index=False)
    name = models.CharField(max_length=200)
    depth = models.PositiveIntegerField(help_text="k: top-k candidates of each system for each question")
    systems = models.ManyToManyField(System, related_name="pools")
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.BUILT)
    chunk_size = models.PositiveIntegerField(default=256, help_text="Questions per ranking task")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    progress_done = models.PositiveIntegerField(default=0, help_text="Ranking chunks done")
    progress_total = models.PositiveIntegerField(default=0, help_text="Ranking chunks in all (systems x chunks)")
    error = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True, help_text="File an imported pool was read from")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sample", "name"]
        constraints = [models.UniqueConstraint(fields=["sample", "name"], name="pool_unique_name")]

    def __str__(self) -> str:
        return f"{self.sample}/{self.name}"


class PoolChunk(models.Model):
    """One finished ranking task of a pool build: (system, chunk of questions) -> a top-k file."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="chunks", db_index=False)
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveIntegerField()
    result_file = models.CharField(max_length=500)
    finished_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "system", "index"], name="pool_chunk_unique")]


class PoolEntry(models.Model):
    """One pooled candidate triple; ``depth`` = best (smallest) rank at which any system retrieved it."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="entries", db_index=False)
    head = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+", db_index=False)
    tail = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    depth = models.PositiveIntegerField(null=True, blank=True, help_text="Null: unknown (imported without depth)")
    num_systems = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "pool entries"
        ordering = ["pool", "depth", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "head", "relation", "tail"], name="pool_entry_unique_triple"),
        ]
        indexes = [
            models.Index(fields=["pool", "depth"], name="pool_entry_depth"),
            # Deleting entities (a KG, `import_kg --replace`) makes PostgreSQL look up the rows referencing each
            # one: without these, one sequential scan of the table per entity (minutes on FB15k-237).
            models.Index(fields=["head"], name="pool_entry_head"),
            models.Index(fields=["tail"], name="pool_entry_tail"),
        ]

    def __str__(self) -> str:
        return f"({self.head_id}, {self.relation_id}, {self.tail_id}) depth {self.depth}"


class PoolHit(models.Model):
    """Provenance: ``system`` retrieved ``entry`` at ``rank`` for ``question`` (rank null when unknown).

    Every entry has at least one hit, so ``hits`` also tells which sampled question(s) an entry answers.
    """

    entry = models.ForeignKey(PoolEntry, on_delete=models.CASCADE, related_name="hits", db_index=False)
    # RESTRICT: a pooled system cannot be deleted while its pool exists (its hits are the provenance that the
    # exports of judged triples list); delete the pool first, which is refused while the pool has judgments.
    # (Deleting the whole KG, which takes the pool's hits along, stays possible.)
    system = models.ForeignKey(System, on_delete=models.RESTRICT, related_name="+", null=True, blank=True,
                               help_text="Null: imported pool entry without system information", db_index=False)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "system", "question"], name="pool_hit_unique"),
        ]
        indexes = [models.Index(fields=["system", "rank"], name="pool_hit_system_rank")]


class Upload(models.Model):
    """Files sent through the API, imported in the background (``pooling.services.uploads``): a knowledge graph,
    or a system's score matrix, TREC run or checkpoint. Progress and the outcome are read from here."""

    class Kind(models.TextChoices):
        KG = "kg", "knowledge graph"
        SCORES = "scores", "score matrix"
        RUN = "run", "TREC run"
        CHECKPOINT = "checkpoint", "checkpoint"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=100, help_text="Name of the knowledge graph or system it creates")
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, null=True, blank=True, related_name="uploads",
                           help_text="The system's KG; for a KG upload, the KG once imported")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    folder = models.CharField(max_length=500, help_text="Where the files are, relative to STORAGE_DIR")
    params = models.JSONField(default=dict, blank=True, help_text="Import options (file names, description...)")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    stage = models.CharField(max_length=100, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    system = models.ForeignKey(System, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} upload {self.pk} ({self.name}, {self.status})"
