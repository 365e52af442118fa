"""The judging API's two hot requests, next-item and submit, on the few-statement path (issue 21): what they
answer, shared by the DRF views (``api/views``) and the WSGI lane that serves them without the rest of the stack
(``api/lane``). Each returns None when the request is not for this path (not PostgreSQL, not an annotator of the
campaign, not the caller's hand-out, an invalid token): the views' full checks then give the 401 / 403 / 404."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Assignment, Campaign, Judgment
from annotation.selectors import web
from annotation.services.distribution import next_item
from annotation.services.errors import NotAllowed
from annotation.services.hand_out_sql import fast_path, hand_out_for_api
from annotation.services.submit_sql import submit_for_api
from annotation.views._common import public_message

OK, CREATED = 200, 201


@dataclass
class Answered:
    status: int
    body: dict
    user: object  # who was served (checked from their token when they offered one)


def handout_body(assignment: Assignment | None, campaign, view: web.ItemView | None = None) -> dict:
    """A hand-out as the API shows it (next-item, item detail, undo, a submit's ``next``)."""
    if assignment is None:
        return {"hand_out": None, "item": None, "request_id": "", "expires_at": None,
                "allowed_domains": campaign.allowed_domains, "detail": "nothing left for you to judge in this campaign"}
    view = view or web.item_view(assignment.item)
    return {"hand_out": assignment.pk, "item": view.as_dict(),
            "request_id": web.request_id_for(assignment), "expires_at": assignment.expires_at,
            "allowed_domains": campaign.allowed_domains}


def judgment_body(j: Judgment) -> dict:
    return {"id": j.pk, "hand_out": j.assignment_id, "answer": j.answer, "source_url": j.source_url,
            "source_domain": j.source_domain, "quote": j.quote, "time_on_task_ms": j.time_on_task_ms,
            "client_time_ms": j.client_time_ms, "request_id": j.request_id, "given_at": j.given_at}


def next_hand_out_body(name: str, user, campaign=None) -> dict:
    """A submit's ``next``: what next-item would answer now, in its own transaction after the judgment's commit
    (the judgment stays stored whatever happens here). The person's role was checked by the submit; should it have
    gone in between, ``next`` says so instead of a hand-out."""
    try:
        if fast_path():
            handed = hand_out_for_api(name, user)
            if handed is not None:
                return handout_body(handed.assignment, handed.campaign, handed.view)
        campaign = campaign or Campaign.objects.get(name=name)
        return handout_body(next_item(campaign, user), campaign)
    except NotAllowed as exc:
        detail = public_message(exc)
    except Campaign.DoesNotExist:
        detail = "no such campaign"
    return {"hand_out": None, "item": None, "request_id": "", "expires_at": None, "allowed_domains": [],
            "detail": detail}


def quote_of(validated: dict) -> str:
    """The judgment's text: the quote, or the can't-tell comment sent as ``comment``."""
    return validated.get("quote", "") or validated.get("comment", "")


def fast_next_item(name: str, caller) -> Answered | None:
    """Next-item for ``caller`` (a user, or an ``OfferedToken`` checked in the first statement)."""
    handed = hand_out_for_api(name, caller)
    if handed is None:
        return None
    return Answered(OK, handout_body(handed.assignment, handed.campaign, handed.view), handed.user)


def fast_submit(name: str, hand_out: int, caller, validated: dict) -> Answered | None:
    """A submit of ``validated`` (``JudgmentIn``'s data) to the hand-out; the services' refusals (``AnnotationError``)
    are raised for the caller to answer."""
    done = submit_for_api(name, hand_out, caller, validated["answer"], validated["source_url"],
                          quote=quote_of(validated), client_time_ms=validated.get("time_on_task_ms"),
                          request_id=validated.get("request_id", ""))
    if done is None:
        return None
    judgment, repeat = done
    body = judgment_body(judgment)
    if validated["next"]:
        body["next"] = next_hand_out_body(name, judgment.user)
    return Answered(OK if repeat else CREATED, body, judgment.user)
