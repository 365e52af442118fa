"""Writes: question templates (KG-level defaults, campaign overrides)."""
from __future__ import annotations

from django.db import transaction

from annotation.lib.templates import TemplateError, check_template, default_template
from annotation.models import Campaign, QuestionTemplate
from annotation.services.errors import AnnotationError
from pooling.models import KnowledgeGraph, Relation


def ensure_default_templates(kg: KnowledgeGraph, *, regenerate: bool = False) -> int:
    """Write the generated default template of every relation of ``kg`` that has none (all generated ones with
    ``regenerate``; templates edited by a person are kept). Returns the number written."""
    existing = {
        t.relation_id: t for t in QuestionTemplate.objects.filter(kg=kg, campaign__isnull=True)
    }
    new, changed = [], []
    for relation in Relation.objects.filter(kg=kg).order_by("index"):
        text = default_template(relation.key, relation.text if not relation.key.startswith("/") else "")
        current = existing.get(relation.pk)
        if current is None:
            new.append(QuestionTemplate(kg=kg, relation=relation, text=text, is_generated=True))
        elif regenerate and current.is_generated and current.text != text:
            current.text = text
            changed.append(current)
    with transaction.atomic():
        QuestionTemplate.objects.bulk_create(new, batch_size=1000, ignore_conflicts=True)
        QuestionTemplate.objects.bulk_update(changed, ["text"], batch_size=1000)
    return len(new) + len(changed)


def set_template(relation: Relation, text: str, *, campaign: Campaign | None = None, user=None) -> QuestionTemplate:
    """Set the KG default (``campaign`` None) or a campaign's override of ``relation``'s template."""
    try:
        text = check_template(text)
    except TemplateError as exc:
        raise AnnotationError(str(exc)) from None
    if campaign is not None and campaign.pool.sample.kg_id != relation.kg_id:
        raise AnnotationError(f"relation {relation.key} is not in the campaign's knowledge graph")
    template, _ = QuestionTemplate.objects.update_or_create(
        kg_id=relation.kg_id, relation=relation, campaign=campaign,
        defaults={"text": text, "is_generated": False, "updated_by": user},
    )
    return template


def reset_template(relation: Relation, *, campaign: Campaign | None = None) -> None:
    """Drop a campaign override (back to the KG default), or regenerate the KG default."""
    if campaign is not None:
        QuestionTemplate.objects.filter(relation=relation, campaign=campaign).delete()
        return
    QuestionTemplate.objects.filter(relation=relation, campaign__isnull=True).delete()
    ensure_default_templates(relation.kg)
