"""Context from the KG on the judge page (issue 15): known facts of both entities (the question's relation first,
then the entity's most frequent relations, at most five each), the other known answers of the question from train,
and the "why this question" box in plain words; a fixed number of queries whatever the numbers of facts and
systems, and never the candidate triple itself (a gold check drawn from train would show its answer)."""
from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from annotation.selectors.kg_context import kg_context
from pooling.models import Entity, PoolEntry, PoolHit, Question, Relation, Split, System, Triple
from tests._annotation_web_support import NAT, member, nationality_campaign

pytestmark = pytest.mark.django_db


def add_train(kg, head: Entity, relation: Relation, tail: Entity) -> None:
    Triple.objects.create(kg=kg, head=head, relation=relation, tail=tail, split=Split.TRAIN)


def entity(kg, key: str, name: str) -> Entity:
    return Entity.objects.create(kg=kg, index=1000 + Entity.objects.filter(kg=kg).count(), key=key, name=name)


@pytest.fixture
def judged(tmp_path):
    """(campaign, kg, entities by key, nationality relation, the campaign's item (Jeremy Irons, nationality, UK))."""
    campaign = nationality_campaign(tmp_path, entries=1)
    kg = campaign.pool.sample.kg
    people = {e.key: e for e in Entity.objects.filter(kg=kg)}
    nat = Relation.objects.get(kg=kg, key=NAT)
    Relation.objects.filter(pk=nat.pk).update(text="nationality")
    add_train(kg, people["irons"], nat, people["france"])
    add_train(kg, people["irons"], nat, people["usa"])
    acted = Relation.objects.create(kg=kg, index=50, key="/film/actor/film", text="acted in")
    born = Relation.objects.create(kg=kg, index=51, key="/people/person/place_of_birth", text="born in")
    for n, title in enumerate(("Dead Ringers", "Reversal of Fortune", "The Mission")):
        add_train(kg, people["irons"], acted, entity(kg, f"film{n}", title))
    add_train(kg, people["irons"], born, entity(kg, "cowes", "Cowes"))
    return campaign, kg, people, nat, campaign.items.get()


def add_hits(campaign, item, systems: list[tuple[str, int]]) -> None:
    entry = PoolEntry.objects.get(pool=campaign.pool, head=item.head, relation=item.relation, tail=item.tail)
    question = Question.objects.get(sample=campaign.pool.sample, side=Question.Side.TAIL, anchor=item.head)
    for name, rank in systems:
        system = System.objects.create(kg=campaign.pool.sample.kg, name=name, origin=System.Origin.IMPORTED)
        PoolHit.objects.create(entry=entry, system=system, question=question, rank=rank)


def test_facts_known_answers_in_a_deterministic_order_without_the_candidate(judged):
    campaign, kg, people, nat, item = judged
    add_train(kg, people["irons"], nat, people["uk"])  # the candidate itself in train (as a gold check would be)
    context = kg_context(item, campaign)
    head = [(f.relation, f.other) for f in context.head_facts]
    assert head == [("nationality", "France"), ("nationality", "United States"), ("acted in", "Dead Ringers"),
                    ("acted in", "Reversal of Fortune"), ("acted in", "The Mission")]  # born in: sixth, left out
    tail = [(f.relation, f.other, f.outgoing) for f in context.tail_facts]
    assert ("nationality", "Michael Caine", False) in tail and all(o != "Jeremy Irons" for _r, o, _out in tail)
    [known] = context.known_answers
    assert known.question == "(Jeremy Irons, nationality, ?)" and known.answers == ["France", "United States"]


def test_judge_page_shows_context_and_why_in_plain_words(judged, client):
    campaign, _kg, _people, _nat, item = judged
    add_hits(campaign, item, [("RotatE", 1), ("TransE", 3)])
    client.force_login(member(campaign, "ann", "annotator"))
    page = client.get(client.get(reverse("annotation:judge_next", args=[campaign.name])).url)
    body = re.sub(r"\s+", " ", html.unescape(page.content.decode()))
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body))
    assert "Known answers in the KG to (Jeremy Irons, nationality, ?): France, United States" in words
    assert "Jeremy Irons <em>acted in</em> Dead Ringers" in body
    assert "Michael Caine <em>nationality</em> United Kingdom" in body
    assert "It answers the question (Jeremy Irons, nationality, ?), which the test triple " \
           "(Jeremy Irons, nationality, Ireland) asks with the answer hidden" in words
    # which systems proposed it, at which rank, is never shown: it anchors answers and gold checks lack it
    assert "RotatE" not in words and "TransE" not in words and "guess number" not in words


def queries(function) -> int:
    with CaptureQueriesContext(connection) as captured:
        function()
    return len(captured.captured_queries)


def test_query_count_does_not_grow_with_facts_answers_or_systems(judged, client):
    campaign, kg, people, nat, item = judged
    add_hits(campaign, item, [("RotatE", 1)])
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    url = client.get(reverse("annotation:judge_next", args=[campaign.name])).url
    small_context = queries(lambda: kg_context(item, campaign))
    small_page = queries(lambda: client.get(url))

    acted = Relation.objects.get(kg=kg, key="/film/actor/film")
    for n in range(40):  # many more facts of both entities and many more known answers
        film = entity(kg, f"more{n}", f"Film {n}")
        add_train(kg, people["irons"], acted, film)
        add_train(kg, entity(kg, f"citizen{n}", f"Citizen {n}"), nat, people["uk"])
        add_train(kg, people["irons"], nat, entity(kg, f"country{n}", f"Country {n}"))
    add_hits(campaign, item, [(f"system{n}", n + 2) for n in range(8)])
    assert queries(lambda: kg_context(item, campaign)) == small_context
    assert queries(lambda: client.get(url)) == small_page
    context = kg_context(item, campaign)
    assert len(context.head_facts) == 5 and len(context.tail_facts) == 5
    assert len(context.known_answers[0].answers) == 10 and context.known_answers[0].more
    assert len(context.why) == 1
    assert small_context <= 11
    print(f"KG context: {small_context} queries; judge page: {small_page} queries (1 or 9 systems, 6 or 126 facts)")


def test_adjudication_page_shows_the_context(judged, client):
    from annotation.services.distribution import next_item
    from annotation.services.judging import submit_judgment

    campaign, _kg, _people, _nat, _item = judged
    for name, answer in (("ann", "Y"), ("bob", "N")):
        user = member(campaign, name, "annotator")
        submit_judgment(next_item(campaign, user).item, user, answer, "https://en.wikipedia.org/wiki/Jeremy_Irons")
    client.force_login(member(campaign, "ada", "adjudicator"))
    handed = client.get(reverse("annotation:adjudicate_next", args=[campaign.name]))
    body = html.unescape(client.get(handed.url).content.decode())
    assert "Known answers in the KG" in body and "Dead Ringers" in body
    assert Assignment.objects.filter(kind=Assignment.Kind.ADJUDICATE).count() == 1
