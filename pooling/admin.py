from django.contrib import admin

from kgpool.admin_deletion import GuardedDeleteAdmin
from kgpool.admin_paging import EntitySearchAdmin, LargeTableAdmin, related_filter
from pooling.models import Entity, KnowledgeGraph, Relation


@admin.register(KnowledgeGraph)
class KnowledgeGraphAdmin(GuardedDeleteAdmin):
    list_display = ["name", "num_entities", "num_relations", "num_train", "num_valid", "num_test", "created_at"]
    readonly_fields = ["num_entities", "num_relations", "num_train", "num_valid", "num_test", "arrays_file", "created_at"]


@admin.register(Entity)
class EntityAdmin(EntitySearchAdmin, GuardedDeleteAdmin):
    list_display = ["name", "key", "kg", "index"]
    list_filter = ["kg"]
    search_fields = ["=key", "=name"]  # exact (get_search_results): millions of rows
    entity_search_fields = ("pk",)
    readonly_fields = ["kg", "index"]  # a row of the KG's index arrays

    def has_delete_permission(self, request, obj=None):
        return False  # a row of the KG's index arrays: delete the knowledge graph instead


@admin.register(Relation)
class RelationAdmin(GuardedDeleteAdmin):
    list_display = ["key", "text", "kg", "domain_type", "range_type"]
    list_filter = ["kg"]
    search_fields = ["key", "text"]

    def has_delete_permission(self, request, obj=None):
        return False  # a row of the KG's index arrays: delete the knowledge graph instead


# --- pooling campaign -------------------------------------------------------------------------------------
from django.utils.html import format_html  # noqa: E402

from pooling.models import Pool, PoolEntry, PoolHit, Question, Ranking, Sample, System  # noqa: E402


@admin.register(System)
class SystemAdmin(GuardedDeleteAdmin):
    list_display = ["name", "kg", "architecture", "origin", "status", "valid_mrr", "test_mrr", "updated_at"]
    list_filter = ["kg", "origin", "status", "architecture"]
    search_fields = ["name"]
    readonly_fields = ["checkpoint_file", "valid_mrr", "test_mrr", "status", "error", "created_at", "updated_at"]


@admin.register(Sample)
class SampleAdmin(GuardedDeleteAdmin):
    list_display = ["name", "kg", "method", "seed", "size", "kl_divergence", "created_at"]
    list_filter = ["kg", "method"]
    readonly_fields = ["kg", "method", "seed", "size", "kl_divergence", "source", "created_at"]


@admin.register(Question)
class QuestionAdmin(EntitySearchAdmin, GuardedDeleteAdmin):
    list_display = ["qid", "sample", "side", "anchor", "relation"]
    list_filter = [("sample", related_filter("kg")), "side"]
    # exact, like the entity, entry and item searches: a substring of the anchor's name or key joined every
    # question to the entity table (70 ms a query on PostgreSQL at 5 M triples, and the paginator counts twice)
    search_fields = ["=qid", "=anchor__key", "=relation__key"]
    search_help_text = "Exact question id, anchor entity key or name, or relation key"
    entity_search_fields = ("anchor",)
    relation_search_field = "relation"
    exact_search_fields = ("qid",)
    list_select_related = ["sample__kg", "anchor", "relation"]
    raw_id_fields = ["sample", "anchor", "relation", "triples"]


@admin.register(Ranking)
class RankingAdmin(GuardedDeleteAdmin):
    list_display = ["system", "sample", "k", "mrr", "filter", "updated_at"]
    list_filter = ["sample"]
    readonly_fields = ["ranking_file", "created_at", "updated_at"]


@admin.register(Pool)
class PoolAdmin(GuardedDeleteAdmin):
    list_display = ["name", "sample", "depth", "origin", "status", "progress", "num_entries", "updated_at"]
    list_filter = ["status", "origin", "sample"]
    readonly_fields = ["status", "progress", "progress_done", "progress_total", "error", "started_at", "finished_at",
                       "created_at", "updated_at", "source"]
    filter_horizontal = ["systems"]

    @admin.display(description="progress (chunks)")
    def progress(self, pool: Pool) -> str:
        total = pool.progress_total
        percent = 100 * pool.progress_done // total if total else (100 if pool.status == Pool.Status.DONE else 0)
        return format_html(
            '<progress value="{}" max="100" title="{}%"></progress> {}/{}', percent, percent, pool.progress_done, total
        )

    @admin.display(description="entries")
    def num_entries(self, pool: Pool) -> int:
        return pool.entries.count()


class DepthFilter(admin.SimpleListFilter):
    """Depth bands: no SELECT DISTINCT over every entry."""

    title = "depth"
    parameter_name = "depth_at_most"
    BANDS = (1, 3, 5, 10, 20, 50, 100)

    def lookups(self, request, model_admin):
        return [(str(band), f"≤ {band}") for band in self.BANDS] + [("unknown", "unknown")]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "unknown":
            return queryset.filter(depth__isnull=True)
        if value and value.isdigit():
            return queryset.filter(depth__lte=int(value))
        return queryset


class PoolHitInline(admin.TabularInline):
    model = PoolHit
    extra = 0
    readonly_fields = ["system", "question", "rank"]
    can_delete = False


@admin.register(PoolEntry)
class PoolEntryAdmin(EntitySearchAdmin, GuardedDeleteAdmin):
    list_display = ["head", "relation", "tail", "depth", "num_systems", "pool"]
    list_filter = [("pool", related_filter("sample__kg")), DepthFilter]
    search_fields = ["=head__key", "=tail__key", "=relation__key"]  # exact (get_search_results)
    entity_search_fields = ("head", "tail")
    relation_search_field = "relation"
    list_select_related = ["pool__sample__kg", "head", "relation", "tail"]
    # the model's ordering ("pool" = the pool's own ordering) joins and sorts every entry; by the index instead
    ordering = ["pool_id", "depth", "id"]
    raw_id_fields = ["pool", "head", "relation", "tail"]
    inlines = [PoolHitInline]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        from pooling.services.pools import touch_pool

        touch_pool(form.instance.pool_id)  # an edited entry (or its hits) is a new version of the pool's view
