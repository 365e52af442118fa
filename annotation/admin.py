from django.contrib import admin
from django.db.models import Count, Q

from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    ExpertReview,
    Item,
    Judgment,
    Membership,
    QuestionTemplate,
)
from annotation.services.filtering import revert_auto_labels


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


class TemplateInline(admin.TabularInline):
    model = QuestionTemplate
    fk_name = "campaign"
    extra = 0
    fields = ["relation", "text", "is_generated", "updated_at"]
    readonly_fields = ["is_generated", "updated_at"]
    raw_id_fields = ["relation"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "pool", "items_total", "pending", "in_progress", "agreed", "conflict", "adjudicated",
                    "auto_negative", "imported", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline, TemplateInline]
    raw_id_fields = ["pool"]

    def get_queryset(self, request):
        counts = {
            status: Count("items", filter=Q(items__status=status, items__is_gold=False)) for status in Item.Status.values
        }
        return super().get_queryset(request).annotate(items_total=Count("items", filter=Q(items__is_gold=False)), **counts)

    @admin.display(ordering="items_total")
    def items_total(self, obj):
        return obj.items_total

    def _status(status):  # noqa: N805 - helper building the per-status columns
        def column(self, obj):
            return getattr(obj, status)

        column.short_description = status.replace("_", " ")
        column.admin_order_field = status
        return column

    pending = _status("pending")
    in_progress = _status("in_progress")
    agreed = _status("agreed")
    conflict = _status("conflict")
    adjudicated = _status("adjudicated")
    auto_negative = _status("auto_negative")
    imported = _status("imported")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["pk", "campaign", "head", "relation", "tail", "status", "label", "label_origin", "rule", "num_judgments", "is_gold"]
    list_filter = ["campaign", "status", "label_origin", "rule", "is_gold"]
    raw_id_fields = ["entry", "head", "relation", "tail"]
    readonly_fields = ["num_judgments", "num_active"]
    actions = ["send_back_to_judging"]

    @admin.action(description="Send automatically labelled items back to human judging")
    def send_back_to_judging(self, request, queryset):
        total = 0
        for campaign_id in set(queryset.values_list("campaign_id", flat=True)):
            campaign = Campaign.objects.get(pk=campaign_id)
            total += revert_auto_labels(campaign, item_ids=list(queryset.filter(campaign=campaign).values_list("pk", flat=True)))
        self.message_user(request, f"{total} items sent back to judging")


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "user", "kind", "state", "handed_out_at", "expires_at"]
    list_filter = ["kind", "state"]
    raw_id_fields = ["item", "user"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["item", "user", "answer", "source_domain", "given_at", "time_on_task_ms"]
    list_filter = ["answer", "source_domain"]
    raw_id_fields = ["item", "user", "assignment"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["item", "adjudicator", "label", "decided_at"]
    raw_id_fields = ["item", "adjudicator"]


@admin.register(ExpertReview)
class ExpertReviewAdmin(admin.ModelAdmin):
    list_display = ["item", "expert", "label", "given_at"]
    raw_id_fields = ["item", "expert"]


@admin.register(QuestionTemplate)
class QuestionTemplateAdmin(admin.ModelAdmin):
    list_display = ["relation", "text", "campaign", "kg", "is_generated", "updated_at"]
    list_filter = ["kg", "campaign", "is_generated"]
    search_fields = ["relation__key", "text"]
    raw_id_fields = ["relation", "campaign"]
