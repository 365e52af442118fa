"""The admin's user pages: "delete" retires a user (``services/users.retire_user``): a user who was handed work
is deactivated instead, their open hand-outs cancelled and their items recomputed; the rest are deleted. Unticking
"active" on a user's page does the same deactivation."""
from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from annotation.services.users import deactivate_user, retire_user, work_history
from kgpool.admin_deletion import GuardedDeleteAdmin

User = get_user_model()
_REPORTS = "_kgpool_retire_reports"


@admin.action(permissions=["delete"], description="Delete selected users (those given work are deactivated)")
def delete_or_deactivate_selected(modeladmin, request, queryset):
    """Django's confirmation page (listing who is deactivated rather than deleted), then ``retire_user``."""
    if not request.POST.get("post"):
        return delete_selected(modeladmin, request, queryset)
    _deleted, _counts, perms_needed, _protected = modeladmin.get_deleted_objects(queryset, request)
    if perms_needed:
        raise PermissionDenied
    modeladmin.log_deletions(request, queryset)
    modeladmin.delete_queryset(request, queryset)
    modeladmin.report_retirements(request)
    return None


class RetiringUserAdmin(GuardedDeleteAdmin, UserAdmin):
    def get_actions(self, request):
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            actions["delete_selected"] = (delete_or_deactivate_selected, "delete_selected",
                                          delete_or_deactivate_selected.short_description)
        return actions

    def get_deleted_objects(self, objs, request):
        objs = list(objs)
        lines, deletable = [], []
        for user in objs:
            history = work_history(user)
            if history:
                lines.append(format_html("User: {} will be DEACTIVATED, not deleted: they have {}", user,
                                         "; ".join(history)))
            else:
                deletable.append(user)
        if deletable:
            listed, counts, perms_needed, protected = super().get_deleted_objects(deletable, request)
            return [*lines, *listed], counts, perms_needed, protected
        return lines, {}, set(), []

    def log_deletions(self, request, queryset):
        super().log_deletions(request, [user for user in queryset if not work_history(user)])

    def _retire(self, request, user) -> None:
        report = retire_user(user)
        if not hasattr(request, _REPORTS):
            setattr(request, _REPORTS, [])
        getattr(request, _REPORTS).append(report)
        if not report.deleted:
            self.log_change(request, user, [{"changed": {"fields": ["is_active"]}}])

    def delete_model(self, request, obj):
        self._retire(request, obj)

    def delete_queryset(self, request, queryset):
        for user in list(queryset):
            self._retire(request, user)

    def report_retirements(self, request) -> None:
        for report in getattr(request, _REPORTS, []):
            self.message_user(request, report.message(), messages.SUCCESS if report.deleted else messages.WARNING)

    def response_delete(self, request, obj_display, obj_id):
        reports = getattr(request, _REPORTS, [])
        if reports and not reports[0].deleted:
            self.report_retirements(request)
            return HttpResponseRedirect(reverse("admin:auth_user_change", args=[obj_id]))
        return super().response_delete(request, obj_display, obj_id)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "is_active" in form.changed_data and not obj.is_active:
            report = deactivate_user(obj)
            self.message_user(request, f"{report.cancelled} open hand-out(s) of {obj} cancelled; "
                                       f"{report.items} item(s) back in the queue.")


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, RetiringUserAdmin)
