"""Admin delete pages that answer fast: a refusal naming the protected rows by count, or a summary of what
goes, instead of Django's page listing every cascaded row (which timed out on a large pool)."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import ProtectedError, RestrictedError
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from kgpool.deletion import plan_delete

MAX_LISTED = 20
_REFUSED = "_kgpool_delete_refused"


class GuardedDeleteAdmin(admin.ModelAdmin):
    """Base class of the project's ModelAdmins: ``get_deleted_objects`` from :func:`kgpool.deletion.plan_delete`;
    a delete the database still refuses (rows added since the page was shown) is reported, not a server error."""

    def get_deleted_objects(self, objs, request):
        objs = list(objs)
        listed = [format_html("{}: {}", self.opts.verbose_name.capitalize(), obj) for obj in objs[:MAX_LISTED]]
        if len(objs) > MAX_LISTED:
            listed.append(f"... and {len(objs) - MAX_LISTED:,} more")
        plan = plan_delete(objs)
        if plan.blockers:
            return listed, {}, set(), plan.blockers
        perms_needed = set()
        for model in plan.counts:
            model_admin = self.admin_site._registry.get(model)
            if model_admin is not None and not model_admin.has_delete_permission(request):
                perms_needed.add(model._meta.verbose_name)
        cascaded = [f"{n:,} {model._meta.verbose_name_plural}" for model, n in plan.counts.items() if model is not self.model]
        model_count = {model._meta.verbose_name_plural: n for model, n in plan.counts.items()}
        return [*listed, cascaded] if cascaded else listed, model_count, perms_needed, []

    def delete_model(self, request, obj):
        try:
            with transaction.atomic():
                super().delete_model(request, obj)
        except (ProtectedError, RestrictedError) as exc:
            setattr(request, _REFUSED, f"{obj} was not deleted: {exc.args[0]}")

    def response_delete(self, request, obj_display, obj_id):
        refused = getattr(request, _REFUSED, None)
        if refused:
            self.message_user(request, refused, messages.ERROR)
            return HttpResponseRedirect(reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist"))
        return super().response_delete(request, obj_display, obj_id)
