from django.contrib import admin

from evaluation.models import EvaluationRun


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "sample", "name", "status", "stage", "progress_done", "progress_total", "created_at")
    list_filter = ("status",)
    readonly_fields = ("status", "stage", "progress_done", "progress_total", "error", "result_dir", "files", "summary",
                       "seconds", "created_at", "started_at", "finished_at")
    filter_horizontal = ("systems",)
