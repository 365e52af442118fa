"""Reads: which template applies, the question an item reads as, previews on real triples."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.lib.templates import TemplateError, default_template, render
from annotation.models import Campaign, Item, QuestionTemplate
from pooling.models import PoolEntry, Relation, Triple


def template_text(relation: Relation, campaign: Campaign | None = None) -> str:
    """Campaign override, else the KG default row, else the generated default."""
    rows = {
        c: text for c, text in QuestionTemplate.objects.filter(relation=relation).values_list("campaign_id", "text")
    }
    if campaign is not None and campaign.pk in rows:
        return rows[campaign.pk]
    if None in rows:
        return rows[None]
    return default_template(relation.key, relation.text if not relation.key.startswith("/") else "")


def campaign_templates(campaign: Campaign) -> dict[int, str]:
    """relation pk -> template text in force for every relation of the campaign's KG."""
    kg = campaign.pool.sample.kg
    texts = {
        r.pk: default_template(r.key, r.text if not r.key.startswith("/") else "") for r in Relation.objects.filter(kg=kg)
    }
    for rel, text in QuestionTemplate.objects.filter(kg=kg, campaign__isnull=True).values_list("relation_id", "text"):
        texts[rel] = text
    for rel, text in QuestionTemplate.objects.filter(campaign=campaign).values_list("relation_id", "text"):
        texts[rel] = text
    return texts


def item_question(item: Item) -> str:
    """The yes/no question shown for ``item`` (never reveals gold status or other judgments)."""
    return render(template_text(item.relation, item.campaign), item.head.name or item.head.key, item.tail.name or item.tail.key)


@dataclass(frozen=True)
class PreviewRow:
    head: str
    relation: str
    tail: str
    question: str


def template_preview(
    relation: Relation, text: str | None = None, *, campaign: Campaign | None = None, limit: int = 5
) -> list[PreviewRow]:
    """``text`` (or the template in force) rendered on real triples of ``relation``: the campaign's pool
    entries first, then the KG's train triples. TemplateError when ``text`` is unusable."""
    text = text if text is not None else template_text(relation, campaign)
    pairs: list[tuple[str, str, str, str]] = []
    if campaign is not None:
        pairs += list(
            PoolEntry.objects.filter(pool=campaign.pool, relation=relation)
            .order_by("depth", "pk")
            .values_list("head__name", "head__key", "tail__name", "tail__key")[:limit]
        )
    if len(pairs) < limit:
        pairs += list(
            Triple.objects.filter(relation=relation)
            .order_by("pk")
            .values_list("head__name", "head__key", "tail__name", "tail__key")[: limit - len(pairs)]
        )
    return [
        PreviewRow(hn or hk, relation.key, tn or tk, render(text, hn or hk, tn or tk)) for hn, hk, tn, tk in pairs
    ]


__all__ = ["TemplateError", "template_text", "campaign_templates", "item_question", "template_preview", "PreviewRow"]
