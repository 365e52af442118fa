"""Admin pages of the annotation app. Labels are changed only through services: an edit of a judgment,
adjudication or expert review asks why, records a version and recomputes the item (``services/label_edits``);
an item's status, label and counters are derived and read-only here; a campaign is created by
``services/campaigns.create_campaign`` (its items and templates with it); deletes are guarded
(``kgpool/admin_deletion``), a judged campaign leaves only through ``manage.py archive_campaign``."""
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ORDER_VAR, ChangeList
from django.db.models import Count, Q

from annotation import admin_users  # noqa: F401 - registers the user admin (delete = retire)
from annotation.forms import QuestionTemplateAdminForm
from annotation.lib.sources import SourceError, check_source
from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    ExpertReview,
    Item,
    Judgment,
    LabelVersion,
    Membership,
    QuestionTemplate,
)
from annotation.services.campaigns import checked_domains, create_campaign
from annotation.services.errors import AnnotationError
from annotation.services.filtering import revert_auto_labels
from annotation.services.item_state import recompute_item
from annotation.services.label_edits import edit_adjudication, edit_expert_review, edit_judgment
from kgpool.admin_deletion import GuardedDeleteAdmin
from kgpool.admin_paging import EntitySearchAdmin, LargeTableAdmin

class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


class TemplateInline(admin.TabularInline):
    model = QuestionTemplate
    form = QuestionTemplateAdminForm
    fk_name = "campaign"
    extra = 0
    fields = ["relation", "text", "is_generated", "updated_at"]
    readonly_fields = ["is_generated", "updated_at"]
    raw_id_fields = ["relation"]


class CampaignForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = "__all__"

    def clean_allowed_domains(self):
        domains = self.cleaned_data["allowed_domains"]
        if not isinstance(domains, list):
            raise forms.ValidationError("a JSON list of domain names, e.g. [\"wikipedia.org\"]")
        try:
            return checked_domains(domains)
        except AnnotationError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        cleaned = super().clean()
        relations = cleaned.get("relation_guidelines")
        pool = cleaned.get("pool") or getattr(self.instance, "pool", None)
        if relations is None or pool is None:
            return cleaned
        from annotation.services.guidelines import checked_guidelines

        probe = Campaign(pool=pool)  # the checks need only the campaign's KG
        try:
            cleaned["guidelines"], cleaned["relation_guidelines"] = checked_guidelines(
                probe, cleaned.get("guidelines", ""), relations if isinstance(relations, dict) else None)
        except AnnotationError as exc:
            self.add_error("relation_guidelines", str(exc))
        return cleaned

    def clean_gold_rate(self):
        rate = self.cleaned_data["gold_rate"]
        if not 0 <= rate < 1:
            raise forms.ValidationError("the gold rate must be in [0, 1)")
        return rate


COUNT_COLUMNS = ("items_total", *Item.Status.values)


class CampaignChangeList(ChangeList):
    """The campaign list, with the item counts of the shown rows from one grouped query over the item_counts
    index (issue 18: the counts annotated on the list's query joined every item and grouped them by every campaign
    column, 150 ms on PostgreSQL at 76,583 items, and the paginator's count repeated the join; per-row count
    subqueries made PostgreSQL's estimate high enough to JIT-compile the query, 0.5 s)."""

    def get_results(self, request):
        super().get_results(request)
        shown = [campaign for campaign in self.result_list if not hasattr(campaign, "items_total")]
        counts: dict[int, dict[str, int]] = {c.pk: dict.fromkeys(COUNT_COLUMNS, 0) for c in shown}
        # grouped by is_gold too (not filtered): the index's own order, so SQLite reads the index only
        rows = (Item.objects.filter(campaign__in=list(counts)).values_list("campaign", "is_gold", "status")
                .annotate(n=Count("*")).order_by())
        for campaign_id, is_gold, status, n in rows:
            if not is_gold:
                counts[campaign_id][status] = n
                counts[campaign_id]["items_total"] += n
        for campaign in shown:
            for column, n in counts[campaign.pk].items():
                setattr(campaign, column, n)


@admin.register(Campaign)
class CampaignAdmin(GuardedDeleteAdmin):
    form = CampaignForm
    list_display = ["name", "pool", "items_total", "pending", "in_progress", "agreed", "conflict", "adjudicated",
                    "auto_negative", "imported", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline, TemplateInline]
    raw_id_fields = ["pool"]

    def get_readonly_fields(self, request, obj=None):
        # The items were made from this pool: another pool would leave them pointing at the old one's entries.
        # The judging order and budget are set on the campaign's order page (it re-keys the queue; a plain save
        # here would not).
        return (["pool"] if obj is not None else []) + ["judging_order", "item_budget"]

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        # As `manage.py create_campaign`: one item per pool entry, default templates, reused labels.
        created = create_campaign(
            obj.name, obj.pool, description=obj.description, allowed_domains=obj.allowed_domains,
            assignment_timeout_s=obj.assignment_timeout_s, gold_rate=obj.gold_rate, rushed_factor=obj.rushed_factor,
            evidence_policy=obj.evidence_policy,
        )
        obj.pk, obj.created_at, obj.allowed_domains = created.pk, created.created_at, created.allowed_domains
        obj._state.adding = False
        obj.save(update_fields=["gold_threshold"])
        self.message_user(request, f"{created.items.count():,} items created from pool {obj.pool}")

    def get_deleted_objects(self, objs, request):
        listed, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        if protected:
            protected.append("A campaign with people's labels leaves only through its archive: "
                             "manage.py archive_campaign NAME --confirm NAME (a verified backup first)")
        return listed, counts, perms_needed, protected

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        match = getattr(request, "resolver_match", None)
        if match is None or not match.url_name.endswith("_changelist"):
            return queryset  # the counts are columns of the list only (the change page read every item for them)
        if not self._sorted_by_a_count(request):
            return queryset  # the shown rows' counts come from one grouped query (CampaignChangeList)
        # sorted by a count: every count on the list's query (per-row count subqueries would be JIT-compiled on
        # PostgreSQL, see CampaignChangeList)
        counts = {
            status: Count("items", filter=Q(items__status=status, items__is_gold=False)) for status in Item.Status.values
        }
        return queryset.annotate(items_total=Count("items", filter=Q(items__is_gold=False)), **counts)

    def _sorted_by_a_count(self, request) -> bool:
        columns = {int(part.lstrip("-")) for part in request.GET.get(ORDER_VAR, "").split(".")
                   if part.lstrip("-").isdigit()}
        shown = list(self.get_list_display(request))
        if self.get_actions(request):  # as get_changelist_instance: the sort indices count the checkbox column
            shown = ["action_checkbox", *shown]
        return any(0 <= c < len(shown) and shown[c] in COUNT_COLUMNS for c in columns)

    def get_changelist(self, request, **kwargs):
        return CampaignChangeList

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


VERSION_FIELDS = ["changed_at", "kind", "reason", "author", "changed_by", "old_answer", "new_answer",
                  "old_source_url", "new_source_url", "old_text", "new_text", "note"]


class HistoryInline(admin.TabularInline):
    """The label history, read-only (versions are append-only)."""

    model = LabelVersion
    extra = 0
    can_delete = False
    fields = readonly_fields = VERSION_FIELDS
    ordering = ["changed_at", "pk"]
    verbose_name_plural = "history (append-only)"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ItemHistoryInline(HistoryInline):
    fk_name = "item"


class JudgmentHistoryInline(HistoryInline):
    fk_name = "judgment"


class AdjudicationHistoryInline(HistoryInline):
    fk_name = "adjudication"


class ExpertReviewHistoryInline(HistoryInline):
    fk_name = "expert_review"


class RuleFilter(admin.SimpleListFilter):
    """The trivial filter's rules (an item lists every rule that covers it): no SELECT DISTINCT over the items."""

    title = "rule"
    parameter_name = "rule_has"

    def lookups(self, request, model_admin):
        from annotation.lib.rules import RULES

        return [(rule, rule) for rule in RULES] + [("none", "none")]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "none":
            return queryset.filter(rule="")
        if value:
            return queryset.filter(Q(rule=value) | Q(rule__startswith=f"{value},") | Q(rule__endswith=f",{value}")
                                   | Q(rule__contains=f",{value},"))
        return queryset


@admin.register(Item)
class ItemAdmin(EntitySearchAdmin, GuardedDeleteAdmin):
    list_display = ["pk", "campaign", "head", "relation", "tail", "status", "label", "label_origin", "rule", "num_judgments", "is_gold"]
    list_filter = ["campaign", "status", "label_origin", RuleFilter, "is_gold"]
    search_fields = ["=head__key", "=tail__key", "=relation__key"]  # exact (get_search_results)
    entity_search_fields = ("head", "tail")
    relation_search_field = "relation"
    list_select_related = ["campaign", "head", "relation", "tail"]
    raw_id_fields = ["entry", "head", "relation", "tail"]
    # Derived from the item's judgments, adjudication, hand-outs and stored decisions (services/item_state):
    # change those instead. Only a gold check's known answer is edited here.
    readonly_fields = ["campaign", "entry", "head", "relation", "tail", "status", "label", "label_origin", "rule",
                       "num_judgments", "num_active", "queue_key", "is_gold", "flags", "reused_from"]
    actions = ["send_back_to_judging", "recompute_state"]
    inlines = [ItemHistoryInline]

    def has_add_permission(self, request):
        return False  # items come from the pool (create_campaign) and the gold service

    @admin.action(description="Send automatically labelled items back to human judging")
    def send_back_to_judging(self, request, queryset):
        total = 0
        for campaign_id in set(queryset.values_list("campaign_id", flat=True)):
            campaign = Campaign.objects.get(pk=campaign_id)
            pks = list(queryset.filter(campaign=campaign).values_list("pk", flat=True))
            total += revert_auto_labels(campaign, item_ids=pks).sent_back
        self.message_user(request, f"{total} items sent back to judging")

    @admin.action(description="Recompute the state of the selected items from their judgments")
    def recompute_state(self, request, queryset):
        pks = list(queryset.values_list("pk", flat=True))
        for pk in pks:
            recompute_item(pk)
        self.message_user(request, f"{len(pks)} item(s) recomputed")


@admin.register(Assignment)
class AssignmentAdmin(LargeTableAdmin, GuardedDeleteAdmin):
    list_display = ["item", "user", "kind", "state", "handed_out_at", "expires_at"]
    list_filter = ["kind", "state"]
    raw_id_fields = ["item", "user"]


class LabelEditForm(forms.ModelForm):
    """A correction of a label: the admin says why (kept in the history)."""

    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="Why the label is changed (required; kept in the history)")


class JudgmentForm(LabelEditForm):
    source_url = forms.URLField(max_length=2000, assume_scheme="https")

    class Meta:
        model = Judgment
        fields = ["answer", "source_url", "quote"]

    def clean_source_url(self):
        url = self.cleaned_data["source_url"]
        if url != self.instance.source_url:
            try:
                check_source(url, self.instance.item.campaign.allowed_domains)
            except SourceError as exc:
                raise forms.ValidationError(str(exc)) from None
        return url


class LabelEditAdmin(LargeTableAdmin, GuardedDeleteAdmin):
    """Shared by the judgment, adjudication and expert review pages: no add, no delete, edits through a service."""

    edit_fields: list[str] = []

    def get_fields(self, request, obj=None):
        return [*self.readonly_fields, *self.edit_fields, "note"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        values = {field: form.cleaned_data[field] for field in self.edit_fields}
        try:
            self.edit(obj, by=request.user, note=form.cleaned_data["note"], **values)
        except AnnotationError as exc:
            self.message_user(request, f"not changed: {exc}", messages.ERROR)


@admin.register(Judgment)
class JudgmentAdmin(LabelEditAdmin):
    form = JudgmentForm
    list_display = ["item", "user", "answer", "source_domain", "given_at", "time_on_task_ms", "withdrawn_at"]
    list_filter = ["answer", "source_domain", ("withdrawn_at", admin.EmptyFieldListFilter)]
    readonly_fields = ["item", "user", "assignment", "source_domain", "given_at", "time_on_task_ms", "request_id",
                       "withdrawn_at"]
    edit_fields = ["answer", "source_url", "quote"]
    inlines = [JudgmentHistoryInline]

    def get_queryset(self, request):
        return Judgment.all_objects.select_related("item", "user")  # undone answers stay visible (withdrawn_at)

    @staticmethod
    def edit(obj, *, by, note, answer, source_url, quote):
        edit_judgment(obj, by=by, note=note, answer=answer, source_url=source_url, quote=quote)


class AdjudicationForm(LabelEditForm):
    class Meta:
        model = Adjudication
        fields = ["label", "reason"]


@admin.register(Adjudication)
class AdjudicationAdmin(LabelEditAdmin):
    form = AdjudicationForm
    list_display = ["item", "adjudicator", "label", "decided_at"]
    readonly_fields = ["item", "adjudicator", "decided_at"]
    edit_fields = ["label", "reason"]
    inlines = [AdjudicationHistoryInline]

    @staticmethod
    def edit(obj, *, by, note, label, reason):
        edit_adjudication(obj, by=by, note=note, label=label, reason=reason)


class ExpertReviewForm(LabelEditForm):
    class Meta:
        model = ExpertReview
        fields = ["label", "comment"]


@admin.register(ExpertReview)
class ExpertReviewAdmin(LabelEditAdmin):
    form = ExpertReviewForm
    list_display = ["item", "expert", "label", "given_at"]
    readonly_fields = ["item", "expert", "given_at"]
    edit_fields = ["label", "comment"]
    inlines = [ExpertReviewHistoryInline]

    @staticmethod
    def edit(obj, *, by, note, label, comment):
        edit_expert_review(obj, by=by, note=note, label=label or None, comment=comment)


@admin.register(LabelVersion)
class LabelVersionAdmin(LargeTableAdmin, GuardedDeleteAdmin):
    """The whole label history, read-only."""

    list_display = ["item", "kind", "reason", "author", "changed_by", "old_answer", "new_answer", "changed_at"]
    list_filter = ["kind", "reason"]
    readonly_fields = ["item", "judgment", "adjudication", "expert_review", *VERSION_FIELDS]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(QuestionTemplate)
class QuestionTemplateAdmin(GuardedDeleteAdmin):
    form = QuestionTemplateAdminForm
    list_display = ["relation", "text", "campaign", "kg", "is_generated", "updated_at"]
    list_filter = ["kg", "campaign", "is_generated"]
    search_fields = ["relation__key", "text"]
    raw_id_fields = ["kg", "relation", "campaign"]
