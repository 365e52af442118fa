"""Writes: gold checks drawn from the KG itself (issue 8).

A campaign's gold checks are items whose answer is known: true triples of the TRAIN split (answer Y) and
candidates the trivial filter rules out (answer N): a train triple with its head or tail replaced by another
entity so that the result violates the relation's types, or is a second answer to a single-answer question
(SPEC 4.1, ``annotation/lib/rules.py`` and ``type_rule.py``). They are drawn with a seed, never from the KG's known triples nor from
the campaign's own items.

How they are served (see ``services/distribution.next_item``): a gold item sits in the same shuffled queue
(``queue_key`` drawn like every other item's), is handed to EVERY annotator once (not limited to
``judgments_per_item``: each annotator's accuracy needs their own answers), never gets a final label, never
reaches adjudication, exports or agreement statistics. To read like the pool's items on the judging page
(which shows the sampled test triple whose question retrieved an item), gold triples answer the sample's
questions where the KG allows: Y checks are train triples (h, r, t) of a question (h, r, ?) or (?, r, t)
asked by the sample, N checks corrupt the answer of such a question; other triples only make up a shortfall. The count follows the campaign's ``gold_rate`` of the
items people judge (items labelled by a rule, imported or reused do not count): rate 5% and 1,000 items to
judge -> 50 gold checks, half Y (rounded up) and half N. Each annotator therefore meets about ``gold_rate``
gold checks per item of work.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from annotation.lib.rules import HEAD, SINGLE_ANSWER, TAIL
from annotation.lib.type_rule import type_rule
from annotation.models import Assignment, Campaign, Item, Label
from annotation.selectors.filtering import kg_categories, kg_type_model
from annotation.selectors.item_counts import ItemCounts
from annotation.services.errors import AnnotationError
from pooling.models import Entity, Question, Relation
from pooling.selectors.kg import kg_triples

# Items people judge (gold checks are counted against these).
HUMAN_STATUSES = (
    Item.Status.PENDING, Item.Status.IN_PROGRESS, Item.Status.AGREED, Item.Status.CONFLICT, Item.Status.ADJUDICATED,
)
ATTEMPTS_PER_NEGATIVE = 200


@dataclass
class GoldReport:
    human_items: int  # items people judge (the base of the rate)
    target: int  # gold checks wanted: round(gold_rate * human_items)
    yes: int  # gold checks with answer Y after the call
    no: int  # gold checks with answer N after the call
    added: int = 0
    removed: int = 0  # surplus gold checks never handed out, removed (rate lowered, or items filtered away)
    shortfall: int = 0  # N checks wanted but no ruled-out candidate could be found

    @property
    def total(self) -> int:
        return self.yes + self.no


def human_item_count(campaign: Campaign) -> int:
    return Item.objects.filter(campaign=campaign, is_gold=False, status__in=HUMAN_STATUSES).count()


def gold_target(campaign: Campaign, counts: ItemCounts | None = None) -> tuple[int, int, int]:
    """(items people judge, Y checks wanted, N checks wanted) at the campaign's gold rate; ``counts``: the
    campaign's ``item_counts`` when the caller has them (a page: one grouped query for all)."""
    human = sum(counts.by_status[s] for s in HUMAN_STATUSES) if counts is not None else human_item_count(campaign)
    target = int(math.floor(campaign.gold_rate * human + 0.5))
    yes = (target + 1) // 2
    return human, yes, target - yes


def add_gold_items(campaign: Campaign, *, seed: int = 0) -> GoldReport:
    """Bring the campaign's gold checks to its rate: add the missing ones (drawn with ``seed``), remove surplus
    ones nobody was handed yet. Call it when the set of items to judge is settled (after the trivial filter,
    imports and reuse); calling it again is safe (it only tops up or trims)."""
    if not 0 <= campaign.gold_rate < 1:
        raise AnnotationError("gold_rate must be in [0, 1)")
    human, want_yes, want_no = gold_target(campaign)
    rng = random.Random(seed)
    with transaction.atomic():
        gold = Item.objects.filter(campaign=campaign, is_gold=True)
        have = {Label.YES: gold.filter(gold_answer=Label.YES).count(), Label.NO: gold.filter(gold_answer=Label.NO).count()}
        removed = 0
        for answer, want in ((Label.YES, want_yes), (Label.NO, want_no)):
            surplus = have[answer] - want
            if surplus > 0:
                untouched = (
                    gold.filter(gold_answer=answer, num_judgments=0, num_active=0)
                    .exclude(pk__in=Assignment.objects.filter(item__campaign=campaign).values("item_id"))
                    .order_by("-pk")
                    .values_list("pk", flat=True)[:surplus]
                )
                removed += Item.objects.filter(pk__in=list(untouched)).delete()[0]
        need_yes = max(0, want_yes - have[Label.YES])
        need_no = max(0, want_no - have[Label.NO])
        added = shortfall = 0
        if need_yes or need_no:
            yes, no = draw_gold_triples(campaign, need_yes, need_no, rng)
            shortfall = need_no - len(no)
            new = [(t, Label.YES) for t in yes] + [(t, Label.NO) for t in no]
            rng.shuffle(new)
            Item.objects.bulk_create(
                Item(campaign=campaign, entry=None, head_id=h, relation_id=r, tail_id=t, is_gold=True, gold_answer=answer,
                     queue_key=rng.randrange(2**31))
                for (h, r, t), answer in new
            )
            added = len(new)
        yes_total = gold.filter(gold_answer=Label.YES).count()
        no_total = gold.filter(gold_answer=Label.NO).count()
    return GoldReport(human, want_yes + want_no, yes_total, no_total, added, removed, shortfall)


def draw_gold_triples(
    campaign: Campaign, n_yes: int, n_no: int, rng: random.Random
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """(Y triples, N triples) as (head pk, relation pk, tail pk), none already an item of the campaign."""
    kg = campaign.pool.sample.kg
    arrays = kg_triples(kg)
    train = np.asarray(arrays["train"], dtype=np.int64).reshape(-1, 3)
    entity_pk = dict(Entity.objects.filter(kg=kg).values_list("index", "pk"))
    relation_pk = dict(Relation.objects.filter(kg=kg).values_list("index", "pk"))
    entity_index = {pk: i for i, pk in entity_pk.items()}
    relation_index = {pk: i for i, pk in relation_pk.items()}
    taken = {
        (entity_index[h], relation_index[r], entity_index[t])
        for h, r, t in Item.objects.filter(campaign=campaign).values_list("head_id", "relation_id", "tail_id")
    }
    known = {tuple(row) for split in ("train", "valid", "test") if split in arrays
             for row in np.asarray(arrays[split], dtype=np.int64).reshape(-1, 3).tolist()}

    def to_pks(triple):
        h, r, t = triple
        return entity_pk[h], relation_pk[r], entity_pk[t]

    # The sample's questions as (side, anchor index, relation index): a gold triple answering one of them gets
    # the same "why this question" origin on the judging page as a pooled item (see selectors.web.origin_triples).
    questions = sorted(
        (side, anchor, rel) for side, anchor, rel in Question.objects.filter(sample_id=campaign.pool.sample_id)
        .values_list("side", "anchor__index", "relation__index")
    )
    asked = set(questions)

    yes: list[tuple[int, int, int]] = []
    if n_yes:
        connected, others = [], []
        for i, (h, r, t) in enumerate(train.tolist()):
            (connected if (TAIL, h, r) in asked or (HEAD, t, r) in asked else others).append(i)
        rng.shuffle(connected)
        rng.shuffle(others)
        for i in connected + others:
            triple = tuple(train[i].tolist())
            if triple in taken:
                continue
            taken.add(triple)
            yes.append(to_pks(triple))
            if len(yes) == n_yes:
                break
    no: list[tuple[int, int, int]] = []
    if n_no and len(train) and kg.num_entities > 1:
        table = kg_type_model(kg)
        categories = np.asarray(kg_categories(kg))

        def ruled_out(candidate, side) -> bool:
            if candidate in known or candidate in taken:
                return False
            # The corrupted side answers the question (?, r, t) / (h, r, ?), which already has a known answer.
            r = candidate[1]
            impossible = categories[r] in SINGLE_ANSWER[side]
            return bool(impossible or type_rule(np.array([candidate], dtype=np.int64), table)[0])

        # First the sample's questions (anchor, r, ?) / (?, r, anchor) with a wrong answer, then train triples.
        for _attempt in range(ATTEMPTS_PER_NEGATIVE * n_no if questions else 0):
            if len(no) == n_no:
                break
            side, anchor, r = questions[rng.randrange(len(questions))]
            other = rng.randrange(kg.num_entities)
            candidate = (anchor, r, other) if side == TAIL else (other, r, anchor)
            if other != anchor and ruled_out(candidate, side):
                taken.add(candidate)
                no.append(to_pks(candidate))
        for _attempt in range(ATTEMPTS_PER_NEGATIVE * n_no):
            if len(no) == n_no:
                break
            h, r, t = train[rng.randrange(len(train))].tolist()
            side = rng.choice((HEAD, TAIL))
            other = rng.randrange(kg.num_entities)
            candidate = (other, r, t) if side == HEAD else (h, r, other)
            if ruled_out(candidate, side):
                taken.add(candidate)
                no.append(to_pks(candidate))
    return yes, no
