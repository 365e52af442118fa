"""Errors the annotation services raise; views and API map them to 4xx answers with the message."""
from __future__ import annotations


class AnnotationError(Exception):
    """Base class: the request was refused and nothing was written."""


class NotAllowed(AnnotationError):
    """The user lacks the role needed (e.g. not an annotator of the campaign)."""


class NotAssigned(AnnotationError):
    """The item was not handed to this user (or the hand-out was skipped / expired / closed)."""


class AlreadyJudged(AnnotationError):
    """The user already judged this item with a different answer (``answer``: the one kept)."""

    def __init__(self, message: str, answer: str = "") -> None:
        super().__init__(message)
        self.answer = answer

    @classmethod
    def of(cls, user, item, earlier) -> AlreadyJudged:
        return cls(f"{user} already judged item {item.pk} ({earlier.answer}); a judgment cannot be changed",
                   earlier.answer)


class InvalidSource(AnnotationError):
    """The source URL is not acceptable (scheme, allow-list)."""


class MissingComment(AnnotationError):
    """A can't-tell answer came without the annotator's comment (the adjudicator reads it)."""


class InvalidState(AnnotationError):
    """The item is not in a state that allows the action (e.g. adjudicating an agreed item)."""


class UndoRefused(AnnotationError):
    """An answer cannot be undone any more: someone else acted on it (the message says who did what)."""
