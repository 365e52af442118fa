"""Annotator and adjudicator pages: my campaigns, judge the next item, skip, adjudicate conflicts."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.forms import AdjudicationForm, JudgmentForm
from annotation.lib.evidence import describe as describe_evidence
from annotation.models import Answer, Assignment, Role
from annotation.selectors import web
from annotation.selectors.guidelines import guidelines_view, must_read_guidelines
from annotation.selectors.kg_context import kg_context
from annotation.selectors.next_page import prepare_next, take_prepared
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item, skip_item
from annotation.services.errors import (
    AlreadyJudged,
    AnnotationError,
    InvalidSource,
    InvalidState,
    MissingComment,
    NotAllowed,
    NotAssigned,
)
from annotation.services.judging import submit_judgment
from annotation.views._common import member_campaign, nav_context, own_hand_out, public_message


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/campaign_list.html", {"rows": web.campaigns_for(request.user)})


@login_required
def campaign_home(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user)
    context = nav_context(campaign, request.user, roles)
    # an adjudicator who does not judge: their pace is their decisions, as on the adjudicate pages
    adjudicates_only = Role.ADJUDICATOR in roles and Role.ANNOTATOR not in roles
    work = Assignment.Kind.ADJUDICATE if adjudicates_only else Assignment.Kind.JUDGE
    context.update(progress=web.progress(campaign, request.user, work=work), roles=sorted(roles))
    return render(request, "annotation/campaign_home.html", context)


# --- saving in place ------------------------------------------------------------------------------------
# judge.js sends the judge and adjudicate forms with fetch and this header. Such a save is answered with the next
# page itself (the same templates, rendered in the same request) instead of the redirect to it, which saves two
# round trips; Content-Location gives the page's own address, which the script puts in the address bar. Without
# the header (no JavaScript, JUDGING_IN_PLACE=0) the pages post and redirect as before.

IN_PLACE_HEADER = "X-Kgpool-In-Place"


def _in_place(request: HttpRequest) -> bool:
    return request.headers.get(IN_PLACE_HEADER) == "1"


def _located(response: HttpResponse, url: str) -> HttpResponse:
    response["Content-Location"] = url
    return response


# --- judging ---------------------------------------------------------------------------------------------

@login_required
def judge_next(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    return _next_to_judge(request, campaign, roles)


def _next_to_judge(request: HttpRequest, campaign, roles, *, in_place: bool = False) -> HttpResponse:
    """The user's next hand-out (their open one first): a redirect to its page, or with ``in_place`` the page."""
    if must_read_guidelines(campaign, request.user):  # before the first hand-out, and after every change
        return redirect("annotation:guidelines", name=campaign.name)
    assignment = next_item(campaign, request.user)
    if assignment is None:
        context = nav_context(campaign, request.user, roles)
        context.update(progress=web.progress(campaign, request.user), what="judge")
        return _located(render(request, "annotation/done.html", context),
                        reverse("annotation:judge_next", args=[campaign.name]))
    if not in_place:
        return redirect("annotation:judge_item", name=campaign.name, hand_out=assignment.pk)
    assignment.item.campaign = campaign  # loaded with its pool, sample and KG (the KG context reads them)
    form = JudgmentForm(initial={"request_id": web.request_id_for(assignment)})
    prepared = take_prepared(campaign, request.user, assignment.item_id)  # judge.js asked while the person read
    return _located(_judge_page(request, campaign, roles, assignment, form, prepared=prepared),
                    reverse("annotation:judge_item", args=[campaign.name, assignment.pk]))


def _on_to_next(request: HttpRequest, campaign, roles) -> HttpResponse:
    """After a save, a skip or a closed hand-out: the next item's page (in place), or the redirect to it."""
    if _in_place(request):
        return _next_to_judge(request, campaign, roles, in_place=True)
    return redirect("annotation:judge_next", name=campaign.name)


def _judge_page(request, campaign, roles, assignment: Assignment, form: JudgmentForm, status: int = 200, *,
                prepared=None):
    context = nav_context(campaign, request.user, roles)
    item, kg = prepared or (web.item_view(assignment.item), kg_context(assignment.item, campaign))
    context.update(
        item=item, guidelines=guidelines_view(campaign, item.relation_key), kg=kg,
        form=form, hand_out=assignment.pk, expires_at=assignment.expires_at,
        progress=web.progress(campaign, request.user), allowed_domains=campaign.allowed_domains,
        evidence_policy=campaign.evidence_policy, evidence_rule=describe_evidence(campaign.evidence_policy),
        in_place=settings.KGPOOL_JUDGING_IN_PLACE,
    )
    recent = web.recent_sources(campaign, request.user)
    context.update(recent_sources=recent, source_prefill=web.source_start(recent[0] if recent else ""),
                   head_source=web.entity_source(item.head.url, campaign.allowed_domains),
                   tail_source=web.entity_source(item.tail.url, campaign.allowed_domains))
    return render(request, "annotation/judge.html", context, status=status)


def _closed(request, campaign, roles, assignment: Assignment) -> HttpResponse:
    """The user's own hand-out is no longer open (answered, skipped, expired): on to the next item."""
    if web.own_judgment(assignment.item_id, request.user) is not None:
        messages.info(request, "You already judged that item.")
    else:
        messages.warning(request, "That hand-out is closed; here is your next item.")
    return _on_to_next(request, campaign, roles)


@login_required
@require_http_methods(["GET", "POST"])
def judge_item(request: HttpRequest, name: str, hand_out: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    assignment = own_hand_out(campaign, request.user, hand_out)
    item = assignment.item
    if request.method == "GET":
        if not web.is_open(assignment):
            return _closed(request, campaign, roles, assignment)
        if must_read_guidelines(campaign, request.user):
            return redirect("annotation:guidelines", name=campaign.name)
        form = JudgmentForm(initial={"request_id": web.request_id_for(assignment)})
        return _judge_page(request, campaign, roles, assignment, form)

    form = JudgmentForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            submit_judgment(
                item, request.user, data["answer"], data["source_url"], quote=data["quote"],
                client_time_ms=data["time_on_task_ms"], request_id=data["request_id"],
            )
        except InvalidSource as exc:
            form.add_error("source_url", str(exc))
        except MissingComment as exc:
            form.add_error("quote", str(exc))
        except AlreadyJudged as exc:  # e.g. answered differently in another tab: that answer stays
            messages.warning(request, f"Not saved: you had already answered this item "
                                      f"({Answer(exc.answer).label if exc.answer else 'another answer'}), perhaps in "
                                      "another tab. That answer is kept; undo it under My answers to change it.")
            return _on_to_next(request, campaign, roles)
        except NotAssigned as exc:
            messages.warning(request, public_message(exc))
            return _on_to_next(request, campaign, roles)
        except AnnotationError as exc:
            form.add_error(None, public_message(exc))
        else:
            messages.success(request, "Saved.")
            return _on_to_next(request, campaign, roles)
    assignment.refresh_from_db()
    if not web.is_open(assignment):  # invalid form on a hand-out that closed meanwhile
        return _closed(request, campaign, roles, assignment)
    return _judge_page(request, campaign, roles, assignment, form, status=400)


@login_required
def judge_prepare_next(request: HttpRequest, name: str, hand_out: int) -> HttpResponse:
    """judge.js, once an item is shown in place: prepare the page of the item likely handed out next
    (``selectors/next_page``). Answers 204 and nothing else whatever the queue holds: no channel to the browser."""
    campaign, _roles = member_campaign(name, request.user, Role.ANNOTATOR)
    assignment = own_hand_out(campaign, request.user, hand_out)
    if settings.KGPOOL_JUDGING_IN_PLACE and web.is_open(assignment):
        prepare_next(campaign, request.user)
    return HttpResponse(status=204)


@login_required
@require_POST
def judge_skip(request: HttpRequest, name: str, hand_out: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ANNOTATOR)
    assignment = own_hand_out(campaign, request.user, hand_out)
    try:
        skip_item(assignment.item, request.user)
    except NotAssigned:
        pass  # already skipped or answered (a double click): nothing to do
    else:
        messages.info(request, "Skipped.")
    return _on_to_next(request, campaign, roles)


# --- adjudication ----------------------------------------------------------------------------------------

@login_required
def adjudicate_next(request: HttpRequest, name: str) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ADJUDICATOR)
    return _next_to_adjudicate(request, campaign, roles)


def _next_to_adjudicate(request: HttpRequest, campaign, roles, *, in_place: bool = False) -> HttpResponse:
    """The adjudicator's next conflict: a redirect to its page, or with ``in_place`` the page."""
    assignment = next_adjudication(campaign, request.user)
    if assignment is None:
        context = nav_context(campaign, request.user, roles)
        context.update(progress=web.progress(campaign, request.user, work=Assignment.Kind.ADJUDICATE),
                       what="adjudicate")
        return _located(render(request, "annotation/done.html", context),
                        reverse("annotation:adjudicate_next", args=[campaign.name]))
    if not in_place:
        return redirect("annotation:adjudicate_item", name=campaign.name, hand_out=assignment.pk)
    assignment.item.campaign = campaign
    return _located(_adjudicate_page(request, campaign, roles, assignment, AdjudicationForm()),
                    reverse("annotation:adjudicate_item", args=[campaign.name, assignment.pk]))


def _on_to_next_conflict(request: HttpRequest, campaign, roles) -> HttpResponse:
    if _in_place(request):
        return _next_to_adjudicate(request, campaign, roles, in_place=True)
    return redirect("annotation:adjudicate_next", name=campaign.name)


@login_required
@require_http_methods(["GET", "POST"])
def adjudicate_item(request: HttpRequest, name: str, hand_out: int) -> HttpResponse:
    campaign, roles = member_campaign(name, request.user, Role.ADJUDICATOR)
    assignment = own_hand_out(campaign, request.user, hand_out, Assignment.Kind.ADJUDICATE)
    item = assignment.item
    form = AdjudicationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            adjudicate(item, request.user, form.cleaned_data["label"], form.cleaned_data["reason"])
        except NotAllowed as exc:
            raise PermissionDenied(public_message(exc)) from None
        except (InvalidState, NotAssigned) as exc:
            messages.warning(request, public_message(exc))
            return _on_to_next_conflict(request, campaign, roles)
        except AnnotationError as exc:
            form.add_error(None, public_message(exc))
        else:
            messages.success(request, "Decision saved.")
            return _on_to_next_conflict(request, campaign, roles)
    if not web.is_open(assignment):  # decided meanwhile, or the hand-out lapsed: on to the next conflict
        messages.info(request, "That conflict is no longer handed to you; here is the next one.")
        return _on_to_next_conflict(request, campaign, roles)
    return _adjudicate_page(request, campaign, roles, assignment, form)


def _adjudicate_page(request, campaign, roles, assignment: Assignment, form: AdjudicationForm) -> HttpResponse:
    item = assignment.item
    context = nav_context(campaign, request.user, roles)
    view = web.item_view(item)
    context.update(
        item=view, guidelines=guidelines_view(campaign, view.relation_key), kg=kg_context(item, campaign),
        case=web.adjudication_evidence(item), form=form, hand_out=assignment.pk,
        progress=web.progress(campaign, request.user, work=Assignment.Kind.ADJUDICATE),
        in_place=settings.KGPOOL_JUDGING_IN_PLACE,
    )
    return render(request, "annotation/adjudicate.html", context, status=400 if form.errors else 200)
