"""Reads: which template applies, the question an item reads as, previews on real triples."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from annotation.lib.templates import TemplateError, check_template, cut_name, default_template, render
from annotation.models import Campaign, Item, QuestionTemplate
from pooling.models import PoolEntry, Relation, Triple

log = logging.getLogger(__name__)


def generated_template(relation: Relation) -> str:
    return default_template(relation.key, relation.text if not relation.key.startswith("/") else "")


def template_text(relation: Relation, campaign: Campaign | None = None) -> str:
    """Campaign override, else the KG default row, else the generated default."""
    rows = {
        c: text for c, text in QuestionTemplate.objects.filter(relation=relation).values_list("campaign_id", "text")
    }
    if campaign is not None and campaign.pk in rows:
        return rows[campaign.pk]
    if None in rows:
        return rows[None]
    return generated_template(relation)


def campaign_templates(campaign: Campaign) -> dict[int, str]:
    """relation pk -> template text in force for every relation of the campaign's KG."""
    kg = campaign.pool.sample.kg
    texts = {r.pk: generated_template(r) for r in Relation.objects.filter(kg=kg)}
    for rel, text in QuestionTemplate.objects.filter(kg=kg, campaign__isnull=True).values_list("relation_id", "text"):
        texts[rel] = text
    for rel, text in QuestionTemplate.objects.filter(campaign=campaign).values_list("relation_id", "text"):
        texts[rel] = text
    return texts


def template_problem(text: str) -> str:
    """Why a stored template cannot be used ('' when it can). Templates saved before the strict check (or
    written around it) may hold a format spec or an unknown name; pages then use the generated default."""
    try:
        check_template(text)
    except TemplateError as exc:
        return str(exc)
    return ""


def safe_question(text: str, relation: Relation, head: str, tail: str) -> str:
    """``text`` rendered for one triple; an unusable stored template falls back to the relation's generated
    default (logged) instead of failing the page that shows the question."""
    relation_text = relation.text or relation.key
    try:
        return render(text, head, tail, relation_text)
    except TemplateError as exc:
        log.warning("unusable question template of relation %s (%s); using the generated default", relation.key, exc)
        return render(generated_template(relation), head, tail, relation_text)


def item_question(item: Item) -> str:
    """The yes/no question shown for ``item`` (never reveals gold status or other judgments)."""
    return safe_question(template_text(item.relation, item.campaign), item.relation, item.head.name or item.head.key,
                         item.tail.name or item.tail.key)


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
    entries first, then the KG's train triples. TemplateError when ``text`` is unusable (a template in force
    that is unusable previews as the generated default, like the judging pages show it)."""
    if text is None:
        text = template_text(relation, campaign)
        if template_problem(text):
            text = generated_template(relation)
    check_template(text)  # before any query: a bad text costs nothing
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
    relation_text = relation.text or relation.key
    return [
        PreviewRow(cut_name(hn or hk), relation.key, cut_name(tn or tk), render(text, hn or hk, tn or tk, relation_text))
        for hn, hk, tn, tk in pairs
    ]


__all__ = ["TemplateError", "template_text", "campaign_templates", "item_question", "template_preview", "PreviewRow",
           "template_problem", "safe_question", "generated_template"]
