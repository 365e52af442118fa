"""Expert audit pages (SPEC 4.2): the admin draws the sample and reads the report; an expert relabels the sample
blind (keyboard Y / N like judging): the expert's page shows the triple and its question, never the final
label, its origin or the annotators' answers. Thin: services/audit.py and selectors/audit.py do the work."""
from __future__ import annotations

from collections import Counter

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import AuditItem, ExpertReview, Item, Label, Membership, Role
from annotation.selectors import web
from annotation.selectors.audit import audit_decisions, audit_report
from annotation.selectors.templates import item_question
from annotation.services.audit import apply_expert_labels, draw_audit_sample, next_audit_item, submit_audit
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed
from annotation.views._common import managed_campaign, member_campaign, nav_context, public_message


class AuditLabelForm(forms.Form):
    label = forms.ChoiceField(choices=Label.choices, widget=forms.RadioSelect)
    comment = forms.CharField(required=False, max_length=5000)


class AuditDrawForm(forms.Form):
    size = forms.IntegerField(min_value=1, max_value=100_000, initial=200)
    seed = forms.IntegerField(initial=0)
    yes_share = forms.FloatField(min_value=0.0, max_value=1.0, initial=0.5)
    replace = forms.BooleanField(required=False, help_text="Redraw (only while no expert has answered)")


# --- the expert ------------------------------------------------------------------------------------------

def _audit_page(request, campaign, roles, task, form, status=200) -> HttpResponse:
    context = nav_context(campaign, request.user, roles)
    if task is None:
        context.update(section="audit", what="audit")
        return render(request, "annotation/audit.html", context, status=status)
    item = Item.objects.get(pk=task.item_id)
    context.update(section="audit", item=web.item_view(item), position=task.position, remaining=task.remaining,
                   sample=AuditItem.objects.filter(campaign=campaign).count(), form=form)
    return render(request, "annotation/audit.html", context, status=status)


@login_required
def audit_next(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.EXPERT)
    try:
        task = next_audit_item(campaign, request.user)
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from None
    return _audit_page(request, campaign, roles, task, AuditLabelForm())


@login_required
@require_POST
def audit_item(request: HttpRequest, name: str, position: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.EXPERT)
    audit = get_object_or_404(AuditItem.objects.select_related("item__campaign"), campaign=campaign, position=position)
    form = AuditLabelForm(request.POST)
    if form.is_valid():
        try:
            submit_audit(audit.item, request.user, form.cleaned_data["label"], comment=form.cleaned_data["comment"])
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from None
        except InvalidState as exc:
            messages.warning(request, public_message(exc))
        except AnnotationError as exc:
            messages.error(request, public_message(exc))
        else:
            messages.success(request, "Saved.")
        return redirect("annotation:audit_next", name=campaign.name)
    task = next_audit_item(campaign, request.user)
    return _audit_page(request, campaign, roles, task, form, status=400)


# --- the admin -------------------------------------------------------------------------------------------

@login_required
def audit_admin(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    report = audit_report(campaign)
    items = {
        item.pk: item for item in Item.objects.filter(pk__in=[d[0] for d in report.disagreements])
        .select_related("head", "relation", "tail", "campaign")
    }
    disagreements = [
        {"item": items[pk], "question": item_question(items[pk]), "final": final, "expert": expert, "origin": origin}
        for pk, final, expert, origin in report.disagreements if pk in items
    ]
    experts = Membership.objects.filter(campaign=campaign, role=Role.EXPERT).select_related("user").order_by("user__username")
    answered = ExpertReview.objects.filter(item__audit__campaign=campaign).exclude(label="")
    context = nav_context(campaign, request.user)
    context.update(
        section="manage_audit", report=report, disagreements=disagreements, form=AuditDrawForm(),
        experts=[{"username": m.user.username, "answered": answered.filter(expert=m.user).count()} for m in experts],
        drawn=AuditItem.objects.filter(campaign=campaign).order_by("position").first(),
        pending_apply=Counter(decision.outcome for decision in audit_decisions(campaign)),
        applied=Item.objects.filter(campaign=campaign, label_origin=Item.Origin.AUDIT).count(),
    )
    return render(request, "annotation/manage/audit.html", context)


@login_required
@require_POST
def audit_draw(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    form = AuditDrawForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a sample size of at least 1, a whole-number seed and a Y share in [0, 1].")
        return redirect("annotation:manage_audit", name=campaign.name)
    data = form.cleaned_data
    try:
        report = draw_audit_sample(campaign, data["size"], yes_share=data["yes_share"], seed=data["seed"],
                                   replace=data["replace"])
    except AnnotationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Audit sample drawn: {report.drawn} items ({report.yes} final Y of "
                                  f"{report.available_yes}, {report.no} final N of {report.available_no}).")
    return redirect("annotation:manage_audit", name=campaign.name)


@login_required
@require_POST
def audit_apply(request: HttpRequest, name: str) -> HttpResponse:
    """Make the expert majority labels final (origin audit); the form's confirmation box must be ticked."""
    campaign = managed_campaign(name, request.user)
    if request.POST.get("confirm") != "1":
        messages.error(request, "Tick the confirmation box to replace final labels with the expert labels.")
        return redirect("annotation:manage_audit", name=campaign.name)
    report = apply_expert_labels(campaign)
    messages.success(request, f"{len(report.changed)} final label(s) replaced by the expert majority (origin audit); "
                              f"{report.confirmed} confirmed, {report.ties} tie(s) kept.")
    return redirect("annotation:manage_audit", name=campaign.name)
