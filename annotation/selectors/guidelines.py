"""Reads of the judging guidelines: the rendered (safe) HTML beside a question, the full set for the reading
page, and whether a member still has to confirm reading the current version."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.lib.guidelines import guidelines_digest, render_markdown
from annotation.models import Campaign, Membership, Role
from pooling.models import Relation


@dataclass(frozen=True)
class RelationGuidelines:
    key: str
    text: str  # the relation's label ('' when the KG has none)
    markdown: str
    html: str


@dataclass(frozen=True)
class GuidelinesView:
    campaign_html: str
    relations: list[RelationGuidelines]
    digest: str

    @property
    def empty(self) -> bool:
        return not self.digest


def current_digest(campaign: Campaign) -> str:
    return guidelines_digest(campaign.guidelines, campaign.relation_guidelines or {})


def guidelines_view(campaign: Campaign, relation_key: str | None = None) -> GuidelinesView:
    """The campaign's guidelines rendered: campaign-wide and those of ``relation_key`` (or of every relation
    when None, for the reading page: one query for the relations' labels). No query when ``relation_key`` is
    given: the judge page shows only the relation of its question."""
    texts = campaign.relation_guidelines or {}
    keys = sorted(texts) if relation_key is None else [k for k in (relation_key,) if texts.get(k, "").strip()]
    labels: dict[str, str] = {}
    if relation_key is None and keys:
        labels = dict(Relation.objects.filter(kg=campaign.pool.sample.kg_id, key__in=keys).values_list("key", "text"))
    relations = [RelationGuidelines(k, labels.get(k, ""), texts[k], render_markdown(texts[k])) for k in keys]
    return GuidelinesView(render_markdown(campaign.guidelines), relations, current_digest(campaign))


def must_read_guidelines(campaign: Campaign, user) -> bool:
    """True when the campaign has guidelines and the user (an annotator) has not confirmed reading this version."""
    digest = current_digest(campaign)
    if not digest:
        return False
    return not Membership.objects.filter(campaign=campaign, user=user, role=Role.ANNOTATOR,
                                         guidelines_read=digest).exists()
