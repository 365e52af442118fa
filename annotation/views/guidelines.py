"""Judging guidelines pages: read them (and confirm having read them, asked once per version before judging),
and edit them (campaign admins)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.lib.guidelines import MAX_GUIDELINES_CHARS
from annotation.models import Role
from annotation.selectors import web
from annotation.selectors.guidelines import guidelines_view, must_read_guidelines
from annotation.services.errors import AnnotationError
from annotation.services.guidelines import confirm_guidelines_read, set_guidelines
from annotation.views._common import managed_campaign, member_campaign, nav_context
from pooling.models import Relation

RELATION_FIELD = "relation-"  # form field prefix of a relation's guidelines: relation-<key>


@login_required
@require_http_methods(["GET", "POST"])
def read(request: HttpRequest, name: str) -> HttpResponse:
    """The campaign's guidelines; annotators who have not confirmed this version confirm here, then judge."""
    campaign, roles = member_campaign(name, request.user)
    if request.method == "POST":
        if confirm_guidelines_read(campaign, request.user, request.POST.get("digest", "")):
            return redirect("annotation:judge_next", name=campaign.name)
        messages.warning(request, "The guidelines changed while you read them; please read this version.")
        return redirect("annotation:guidelines", name=campaign.name)
    context = nav_context(campaign, request.user, roles)
    context.update(guidelines=guidelines_view(campaign), section="guidelines",
                   confirm=Role.ANNOTATOR in roles and must_read_guidelines(campaign, request.user))
    return render(request, "annotation/guidelines.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def manage(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    text = campaign.guidelines
    texts = dict(campaign.relation_guidelines or {})
    error = ""
    if request.method == "POST":
        text = request.POST.get("campaign", "")
        texts = {key[len(RELATION_FIELD):]: value for key, value in request.POST.items()
                 if key.startswith(RELATION_FIELD)}
        try:
            changed = set_guidelines(campaign, text, texts)
        except AnnotationError as exc:
            error = str(exc)
        else:
            messages.success(request, "Guidelines saved; annotators are asked to read them again." if changed
                             else "Guidelines unchanged.")
            return redirect("annotation:manage_guidelines", name=campaign.name)
    counts = web.relation_item_counts(campaign)
    rows = [{"relation": r, "items": counts.get(r.pk, 0), "text": texts.get(r.key, "")}
            for r in Relation.objects.filter(kg=campaign.pool.sample.kg_id).order_by("index")
            if counts.get(r.pk) or r.key in texts]
    rows.sort(key=lambda row: (-row["items"], row["relation"].index))
    context = nav_context(campaign, request.user)
    context.update(text=text, rows=rows, error=error, max_chars=MAX_GUIDELINES_CHARS, field_prefix=RELATION_FIELD)
    return render(request, "annotation/manage/guidelines.html", context, status=400 if error else 200)
