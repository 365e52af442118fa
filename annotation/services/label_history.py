"""Writes: the history of people's labels (``LabelVersion``, append-only).

Every creation of a judgment, adjudication or expert label writes a ``submit`` version
(:func:`record_submitted`, called inside the transaction that created it); every change writes an
``admin_edit`` version with the old and new values, who and why (``services/label_edits``, the only way to
change a label once given).
"""
from __future__ import annotations

from datetime import datetime

from annotation.models import Adjudication, ExpertReview, Judgment, LabelVersion

Kind = LabelVersion.Kind
Reason = LabelVersion.Reason


def snapshot(subject: Judgment | Adjudication | ExpertReview) -> dict[str, str]:
    """The versioned values of a label: answer, source URL (judgments) and text (quote / reason / comment)."""
    if isinstance(subject, Judgment):
        return {"answer": subject.answer, "source_url": subject.source_url, "text": subject.quote}
    if isinstance(subject, Adjudication):
        return {"answer": subject.label, "source_url": "", "text": subject.reason}
    return {"answer": subject.label, "source_url": "", "text": subject.comment}


def record_version(subject: Judgment | Adjudication | ExpertReview, *, reason: str, changed_by_id: int | None,
                   changed_at: datetime, old: dict[str, str] | None, note: str = "") -> LabelVersion:
    """Append a version of ``subject`` (saved as it is now) after ``old`` (None: its creation)."""
    version = label_version(subject, reason=reason, changed_by_id=changed_by_id, changed_at=changed_at, old=old,
                            note=note)
    version.save(force_insert=True)
    return version


def label_version(subject: Judgment | Adjudication | ExpertReview, *, reason: str, changed_by_id: int | None,
                  changed_at: datetime, old: dict[str, str] | None, note: str = "") -> LabelVersion:
    """``record_version``'s row, unsaved (the API's submit writes it in the statement that stores the judgment)."""
    if isinstance(subject, Judgment):
        kind, author_id, link = Kind.JUDGMENT, subject.user_id, {"judgment": subject}
    elif isinstance(subject, Adjudication):
        kind, author_id, link = Kind.ADJUDICATION, subject.adjudicator_id, {"adjudication": subject}
    else:
        kind, author_id, link = Kind.EXPERT, subject.expert_id, {"expert_review": subject}
    old = old or {"answer": "", "source_url": "", "text": ""}
    new = snapshot(subject)
    return LabelVersion(
        item_id=subject.item_id, kind=kind, author_id=author_id, changed_by_id=changed_by_id, changed_at=changed_at,
        reason=reason, note=note, old_answer=old["answer"], new_answer=new["answer"],
        old_source_url=old["source_url"], new_source_url=new["source_url"], old_text=old["text"], new_text=new["text"],
        **link,
    )


def record_submitted(subject: Judgment | Adjudication | ExpertReview, changed_at: datetime) -> LabelVersion:
    """The first version of a label, by its author (call inside the transaction that created it)."""
    version = submitted_version(subject, changed_at)
    version.save(force_insert=True)
    return version


def submitted_version(subject: Judgment | Adjudication | ExpertReview, changed_at: datetime) -> LabelVersion:
    """``record_submitted``'s row, unsaved."""
    if isinstance(subject, Judgment):
        author_id = subject.user_id
    elif isinstance(subject, Adjudication):
        author_id = subject.adjudicator_id
    else:
        author_id = subject.expert_id
    return label_version(subject, reason=Reason.SUBMIT, changed_by_id=author_id, changed_at=changed_at, old=None)