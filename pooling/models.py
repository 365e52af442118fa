"""Knowledge graphs: entities, relations and triples with their split.

Triples are also kept as index arrays in a .npz file (see `KnowledgeGraph.arrays_file`): computation reads
those, the rows serve browsing, judging pages and foreign keys.
"""
from __future__ import annotations

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
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="entities")
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

    def __str__(self) -> str:
        return self.name


class Relation(models.Model):
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="relations")
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
    kg = models.ForeignKey(KnowledgeGraph, on_delete=models.CASCADE, related_name="triples")
    head = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="+", db_index=False)
    tail = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=5, choices=Split.choices)

    class Meta:
        # Composite indexes led by each foreign key: they serve the lookups by (head, relation) and
        # (tail, relation) and the database's FK checks on delete, without three extra single-column indexes.
        indexes = [
            models.Index(fields=["head", "relation"], name="triple_head_relation"),
            models.Index(fields=["tail", "relation"], name="triple_tail_relation"),
            models.Index(fields=["relation"], name="triple_relation"),
            models.Index(fields=["kg", "split"], name="triple_split"),
        ]

    def __str__(self) -> str:
        return f"({self.head_id}, {self.relation_id}, {self.tail_id}) [{self.split}]"
