"""Writes of the judging guidelines: set them (manage page, admin, campaign file, API) and record that a member
confirmed reading the current version (the judge page asks once per version)."""
from __future__ import annotations

from annotation.lib.guidelines import MAX_GUIDELINES_CHARS, guidelines_digest
from annotation.models import Campaign, Membership
from annotation.services.errors import AnnotationError
from pooling.models import Relation


def checked_guidelines(campaign: Campaign, text: str, relations: dict[str, str]) -> tuple[str, dict[str, str]]:
    """``text`` and ``relations`` (relation key -> text) trimmed, blank texts dropped; AnnotationError when a
    text is too long or a key is no relation of the campaign's KG."""
    if not isinstance(text, str) or not isinstance(relations, dict):
        raise AnnotationError("guidelines are text, and relation guidelines a mapping of relation key to text")
    cleaned = {str(key): _lines(value) for key, value in relations.items()
               if isinstance(value, str) and value.strip()}
    if any(not isinstance(value, str) for value in relations.values()):
        raise AnnotationError("relation guidelines must be text")
    for what, body in [("the campaign guidelines", text), *((f"the guidelines of {k}", v) for k, v in cleaned.items())]:
        if len(body) > MAX_GUIDELINES_CHARS:
            raise AnnotationError(f"{what} have {len(body)} characters; at most {MAX_GUIDELINES_CHARS}")
    known = set(Relation.objects.filter(kg=campaign.pool.sample.kg_id, key__in=list(cleaned))
                .values_list("key", flat=True))
    unknown = sorted(set(cleaned) - known)
    if unknown:
        raise AnnotationError(f"the knowledge graph has no relation {unknown[0]!r}")
    return _lines(text), dict(sorted(cleaned.items()))


def _lines(text: str) -> str:
    """Trimmed, with the browser's CRLF line ends as LF: the same guidelines from a form, a file or the API are the
    same text (and the same version to confirm)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def set_guidelines(campaign: Campaign, text: str, relations: dict[str, str]) -> bool:
    """Replace the campaign's guidelines; True when they changed (members are then asked to read them again,
    since the digest they confirmed no longer matches)."""
    text, relations = checked_guidelines(campaign, text, relations)
    if (campaign.guidelines, campaign.relation_guidelines or {}) == (text, relations):
        return False
    campaign.guidelines, campaign.relation_guidelines = text, relations
    campaign.save(update_fields=["guidelines", "relation_guidelines"])
    return True


def confirm_guidelines_read(campaign: Campaign, user, digest: str) -> bool:
    """Remember that ``user`` read the guidelines of ``digest`` (on each of their memberships of the campaign).
    False, and nothing written, when ``digest`` is not the current version (they changed while the person read)."""
    current = guidelines_digest(campaign.guidelines, campaign.relation_guidelines or {})
    if not current or digest != current:
        return False
    Membership.objects.filter(campaign=campaign, user=user).update(guidelines_read=current)
    return True
