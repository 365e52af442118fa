from django.contrib import admin

from pooling.models import Entity, KnowledgeGraph, Relation


@admin.register(KnowledgeGraph)
class KnowledgeGraphAdmin(admin.ModelAdmin):
    list_display = ["name", "num_entities", "num_relations", "num_train", "num_valid", "num_test", "created_at"]
    readonly_fields = ["num_entities", "num_relations", "num_train", "num_valid", "num_test", "arrays_file", "created_at"]


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "kg", "index"]
    list_filter = ["kg"]
    search_fields = ["name", "key"]


@admin.register(Relation)
class RelationAdmin(admin.ModelAdmin):
    list_display = ["key", "text", "kg", "domain_type", "range_type"]
    list_filter = ["kg"]
    search_fields = ["key", "text"]
