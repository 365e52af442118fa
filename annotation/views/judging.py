"""Annotator and adjudicator pages: my campaigns, judge the next item, skip, adjudicate conflicts."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.forms import AdjudicationForm, JudgmentForm
from annotation.models import Assignment, Item, Role
from annotation.selectors import web
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item, skip_item
from annotation.services.errors import AlreadyJudged, AnnotationError, InvalidSource, InvalidState, NotAllowed, NotAssigned
from annotation.services.judging import submit_judgment
from annotation.views._common import member_campaign, nav_context


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/campaign_list.html", {"rows": web.campaigns_for(request.user)})


@login_required
def campaign_home(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user)
    context = nav_context(campaign, request.user, roles)
    context.update(progress=web.progress(campaign, request.user), roles=sorted(roles))
    return render(request, "annotation/campaign_home.html", context)


# --- judging ---------------------------------------------------------------------------------------------

@login_required
def judge_next(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    assignment = next_item(campaign, request.user)
    if assignment is None:
        context = nav_context(campaign, request.user, roles)
        context.update(progress=web.progress(campaign, request.user), what="judge")
        return render(request, "annotation/done.html", context)
    return redirect("annotation:judge_item", name=campaign.name, item_id=assignment.item_id)


def _judge_page(request, campaign, roles, assignment: Assignment, form: JudgmentForm, status: int = 200):
    context = nav_context(campaign, request.user, roles)
    context.update(
        item=web.item_view(assignment.item), form=form, assignment=assignment,
        progress=web.progress(campaign, request.user), allowed_domains=campaign.allowed_domains,
    )
    return render(request, "annotation/judge.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def judge_item(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    item = get_object_or_404(Item, pk=item_id, campaign=campaign)
    if request.method == "GET":
        assignment = web.open_handout(campaign, request.user, item.pk)
        if assignment is None:
            if web.own_judgment(item.pk, request.user) is not None:
                messages.info(request, "You already judged that item.")
                return redirect("annotation:judge_next", name=campaign.name)
            raise PermissionDenied("this item is not handed to you")
        form = JudgmentForm(initial={
            "request_id": web.request_id_for(assignment), "source_url": web.source_prefill(campaign, request.user),
        })
        return _judge_page(request, campaign, roles, assignment, form)

    form = JudgmentForm(request.POST)
    assignment = web.open_handout(campaign, request.user, item.pk)
    if form.is_valid():
        data = form.cleaned_data
        try:
            submit_judgment(
                item, request.user, data["answer"], data["source_url"], quote=data["quote"],
                time_on_task_ms=data["time_on_task_ms"], request_id=data["request_id"],
            )
        except InvalidSource as exc:
            form.add_error("source_url", str(exc))
        except AlreadyJudged as exc:
            messages.warning(request, str(exc))
            return redirect("annotation:judge_next", name=campaign.name)
        except NotAssigned as exc:
            if not Assignment.objects.filter(item=item, user=request.user, kind=Assignment.Kind.JUDGE).exists():
                raise PermissionDenied(str(exc)) from None
            messages.warning(request, str(exc))
            return redirect("annotation:judge_next", name=campaign.name)
        except AnnotationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Saved.")
            return redirect("annotation:judge_next", name=campaign.name)
    if assignment is None:  # invalid form on an item no longer (or never) handed out
        if not Assignment.objects.filter(item=item, user=request.user, kind=Assignment.Kind.JUDGE).exists():
            raise PermissionDenied("this item is not handed to you")
        messages.warning(request, "That hand-out is closed; here is your next item.")
        return redirect("annotation:judge_next", name=campaign.name)
    return _judge_page(request, campaign, roles, assignment, form, status=400)


@login_required
@require_POST
def judge_skip(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    campaign, _roles = member_campaign(name, request.user, Role.ANNOTATOR)
    item = get_object_or_404(Item, pk=item_id, campaign=campaign)
    try:
        skip_item(item, request.user)
    except NotAssigned:
        if not Assignment.objects.filter(item=item, user=request.user, kind=Assignment.Kind.JUDGE).exists():
            raise PermissionDenied("this item is not handed to you") from None
        # already skipped or answered (a double click): nothing to do
    else:
        messages.info(request, "Skipped.")
    return redirect("annotation:judge_next", name=campaign.name)


# --- adjudication ----------------------------------------------------------------------------------------

@login_required
def adjudicate_next(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ADJUDICATOR)
    assignment = next_adjudication(campaign, request.user)
    if assignment is None:
        context = nav_context(campaign, request.user, roles)
        context.update(progress=web.progress(campaign, request.user), what="adjudicate")
        return render(request, "annotation/done.html", context)
    return redirect("annotation:adjudicate_item", name=campaign.name, item_id=assignment.item_id)


@login_required
@require_http_methods(["GET", "POST"])
def adjudicate_item(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ADJUDICATOR)
    item = get_object_or_404(Item, pk=item_id, campaign=campaign)
    assignment = web.open_handout(campaign, request.user, item.pk, Assignment.Kind.ADJUDICATE)
    form = AdjudicationForm(request.POST or None)
    if request.method == "POST":
        if assignment is None and not Assignment.objects.filter(
            item=item, user=request.user, kind=Assignment.Kind.ADJUDICATE
        ).exists():
            raise PermissionDenied("this conflict is not handed to you")
        if form.is_valid():
            try:
                adjudicate(item, request.user, form.cleaned_data["label"], form.cleaned_data["reason"])
            except NotAllowed as exc:
                raise PermissionDenied(str(exc)) from None
            except InvalidState as exc:
                messages.warning(request, str(exc))
                return redirect("annotation:adjudicate_next", name=campaign.name)
            except AnnotationError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, "Decision saved.")
                return redirect("annotation:adjudicate_next", name=campaign.name)
    if assignment is None:
        raise PermissionDenied("this conflict is not handed to you")
    context = nav_context(campaign, request.user, roles)
    context.update(
        item=web.item_view(item), answers=web.adjudication_answers(item), form=form, assignment=assignment,
        progress=web.progress(campaign, request.user),
    )
    return render(request, "annotation/adjudicate.html", context, status=400 if form.errors else 200)
