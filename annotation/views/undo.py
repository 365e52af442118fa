"""Annotator pages: undo an answer (the judge page's Backspace, or a row of "My recent answers") and the list
of the person's recent answers with, for each, an Undo button or why it cannot be undone."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.lib.undo import RECENT_ANSWERS
from annotation.models import Role
from annotation.selectors.recent_answers import last_answer, recent_answers
from annotation.services.errors import NotAllowed, UndoRefused
from annotation.services.undo import undo_judgment
from annotation.views._common import member_campaign, nav_context, public_message


@login_required
def recent(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    context = nav_context(campaign, request.user, roles)
    context.update(rows=recent_answers(campaign, request.user), limit=RECENT_ANSWERS, section="recent")
    return render(request, "annotation/recent_answers.html", context)


@login_required
@require_POST
def undo(request: HttpRequest, name: str) -> HttpResponse:
    """Undo the answer posted as ``judgment`` (a row of the recent answers), else the person's last answer;
    on success the item is shown again to be judged anew."""
    campaign, _roles = member_campaign(name, request.user, Role.ANNOTATOR)
    back = "annotation:recent_answers" if request.POST.get("judgment") else "annotation:judge_next"
    pk = request.POST.get("judgment", "")
    if pk:
        if not pk.isdigit():
            messages.warning(request, "No such answer.")
            return redirect(back, name=campaign.name)
        target = int(pk)
    else:
        last = last_answer(campaign, request.user)
        if last is None:
            messages.info(request, "You have no answer to undo in this campaign.")
            return redirect(back, name=campaign.name)
        target = last.pk
    try:
        assignment = undo_judgment(target, request.user, campaign=campaign)
    except (NotAllowed, UndoRefused) as exc:
        messages.warning(request, f"Cannot undo: {public_message(exc)}.")
        return redirect(back, name=campaign.name)
    messages.success(request, "Answer undone: judge this item again.")
    return redirect("annotation:judge_item", name=campaign.name, hand_out=assignment.pk)
