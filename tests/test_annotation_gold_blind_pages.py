"""Gold checks look like any other entry to the annotator: pages and API address work by hand-out id (never the
item pk, which would give gold checks away: they are created after the pool's items), and a gold hand-out's
page and JSON have the same structure and keys as a normal one once the variable parts (question, entity
fields, ids) are masked."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, Item
from annotation.selectors.kg_context import kg_context
from annotation.selectors.web import item_view
from annotation.services.gold import add_gold_items
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

KEEP_ATTRS = {"class", "id", "type", "name", "role", "method", "rel", "target", "data-choice", "required", "for",
              "data-focus-key", "inputmode", "autocomplete", "spellcheck", "aria-label", "data-autofocus-error"}


def variable_strings(item: Item) -> list[str]:
    """What legitimately differs from one item to the next: the question and the entities' fields."""
    view = item_view(item).as_dict()
    values = [view["question"]]
    for side in ("head", "tail"):
        e = view[side]
        values += [e["name"], e["key"], e["description"], e["url"], e["wikidata_url"], *e["types"]]
        values += [e["url"].replace("https://", "").replace("http://", "")]
    for origin in view["origins"]:
        values += [origin["head"], origin["relation"], origin["tail"], origin["question"], origin["qid"]]
    context = kg_context(item, item.campaign)  # what the KG says around the item differs from item to item too
    for fact in context.head_facts + context.tail_facts:
        values += [fact.relation, fact.other]
    for known in context.known_answers:
        values += [known.question, *known.answers]
    for why in context.why:
        values += [why.question, *why.test_triples]
    return sorted({v for v in values if v}, key=len, reverse=True)


def mask(text: str, variables: list[str]) -> str:
    for value in variables:
        text = text.replace(value, "<V>")
    text = re.sub(r"\d+", "#", text)
    text = text.replace("?", "<V>")  # the side of the origin question: (?, r, t) or (h, r, ?)
    return re.sub(r"\s+", " ", text).strip()


class Skeleton(HTMLParser):
    def __init__(self, variables: list[str]):
        super().__init__(convert_charrefs=True)
        self.variables = variables
        self.tokens: list[str] = []

    def handle_starttag(self, tag, attrs):
        shown = " ".join(f"{k}={mask(v or '', self.variables) if k in KEEP_ATTRS else '*'}" for k, v in sorted(attrs))
        self.tokens.append(f"<{tag} {shown}>")

    def handle_endtag(self, tag):
        self.tokens.append(f"</{tag}>")

    def handle_data(self, data):
        text = mask(data, self.variables)
        if text:
            self.tokens.append(text)


def collapse(tokens: list[str]) -> list[str]:
    """Repeated runs (type chips, origin rows) count once: their number differs between entities, not by gold."""
    changed = True
    while changed:
        changed = False
        for size in range(1, 9):
            i = 0
            while i + 2 * size <= len(tokens):
                if tokens[i:i + size] == tokens[i + size:i + 2 * size]:
                    del tokens[i + size:i + 2 * size]
                    changed = True
                else:
                    i += 1
    return tokens


# The KG's facts and known answers around an item: a list, or "None in the training data", depending on the entities
# alone (tests/test_annotation_judge_kg_context.py checks they never show the candidate itself); one token here.
KG_CONTEXT = re.compile(r'<div class="facts">.*?(?:</ul>|</p>)\s*</div>|<p class="known-answers">.*?</p>', re.S)


def skeleton(html: str, item: Item) -> list[str]:
    parser = Skeleton(variable_strings(item))
    parser.feed(KG_CONTEXT.sub("<kg-context></kg-context>", html))
    return collapse(parser.tokens)


def shape(value):
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def ints(value) -> set[int]:
    if isinstance(value, dict):
        return set().union(*(ints(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(ints(v) for v in value)) if value else set()
    return {value} if isinstance(value, int) and not isinstance(value, bool) else set()


def test_gold_and_normal_hand_outs_look_the_same(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=3, gold_rate=0.67)
    report = add_gold_items(campaign, seed=0)
    assert (report.yes, report.no) == (1, 1)
    gold_pks = set(Item.objects.filter(campaign=campaign, is_gold=True).values_list("pk", flat=True))
    normal_pks = set(Item.objects.filter(campaign=campaign, is_gold=False).values_list("pk", flat=True))
    assert min(gold_pks) > max(normal_pks)  # the leak this guards against: item pks would tell gold apart
    user = member(campaign, "ann", "annotator")
    client, api = Client(), APIClient()
    client.force_login(user)
    api.force_login(user)

    seen = []  # (is_gold, item, hand_out, html, [json payloads])
    while True:
        response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
        if response.status_code == 200:
            break
        assert response.status_code == 302
        hand_out = int(response.url.rstrip("/").split("/")[-1])
        assignment = Assignment.objects.select_related("item").get(pk=hand_out)
        assert assignment.user == user
        client.get(response.url)  # shows (and uses up) the "Skipped." message of the previous hand-out
        page = client.get(response.url)
        assert page.status_code == 200
        payloads = [api.post(f"/api/campaigns/{campaign.name}/next-item/").json(),
                    api.get(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out}/").json()]
        seen.append((assignment.item.is_gold, assignment.item, hand_out, page.content.decode(), payloads))
        assert client.post(reverse("annotation:judge_skip", args=[campaign.name, hand_out])).status_code == 302
    gold = [row for row in seen if row[0]]
    normal = [row for row in seen if not row[0]]
    assert len(gold) == 2 and len(normal) == 3

    for is_gold, item, hand_out, html, payloads in seen:
        low = html.lower()
        for word in ("gold", "is_gold", "gold_answer", "entry", "queue_key", "status", "label_origin"):
            assert word not in low, (word, is_gold)
        assert 'name="rule"' not in low and "rule:" not in low
        # every URL of the work names the hand-out, none the item
        work_urls = re.findall(r"/campaigns/[\w-]+/judge/(\d+)/", html)
        assert work_urls and set(work_urls) == {str(hand_out)}
        assert f"/judge/{item.pk}/" not in html or item.pk == hand_out
        for payload in payloads:
            assert payload["hand_out"] == hand_out
            assert ints(payload) == {hand_out}  # no other id in the JSON
            dumped = json.dumps(payload).lower()
            assert "gold" not in dumped and "entry" not in dumped and '"rule' not in dumped
            assert '"id"' not in dumped

    # same structure, same keys once the variable parts are masked
    reference_html = skeleton(normal[0][3], normal[0][1])
    reference_json = [shape(p) for p in normal[0][4]]
    for is_gold, item, _hand_out, html, payloads in gold + normal[1:]:
        assert skeleton(html, item) == reference_html, ("gold" if is_gold else "normal", item.pk)
        assert [shape(p) for p in payloads] == reference_json
        # the "why this question" box is there for gold checks as for pooled items
        assert payloads[0]["item"]["origins"]


def test_hand_out_ids_interleave_and_errors_name_no_item(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=3, gold_rate=0.67)
    add_gold_items(campaign, seed=0)
    user = member(campaign, "ann", "annotator")
    api = APIClient()
    api.force_login(user)
    first = api.post(f"/api/campaigns/{campaign.name}/next-item/").json()
    body = {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X", "request_id": first["request_id"]}
    assert api.post(f"/api/campaigns/{campaign.name}/hand-outs/{first['hand_out']}/judgment/", body,
                    format="json").status_code == 201
    changed = api.post(f"/api/campaigns/{campaign.name}/hand-outs/{first['hand_out']}/judgment/",
                       {**body, "answer": "N", "request_id": "other"}, format="json")
    assert changed.status_code == 409
    item_pk = Assignment.objects.get(pk=first["hand_out"]).item_id
    assert f"item {item_pk}" not in changed.json()["detail"] and "this item" in changed.json()["detail"]
