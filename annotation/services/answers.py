"""An answer as people and files spell it: Y / N (a final label), C for an annotator's "can't tell". Its own module
so that every service that takes an answer (judging, adjudication, audits, label edits) reads it without
importing the others."""
from __future__ import annotations

from annotation.models import Answer, Label
from annotation.services.errors import AnnotationError, MissingComment

_ANSWERS = {"y": Label.YES, "yes": Label.YES, "true": Label.YES, "n": Label.NO, "no": Label.NO, "false": Label.NO}
_CANT_TELL = {"c": Answer.CANT_TELL, "cant_tell": Answer.CANT_TELL, "can't tell": Answer.CANT_TELL,
              "cant tell": Answer.CANT_TELL, "?": Answer.CANT_TELL}


def parse_answer(answer: str | bool, *, cant_tell: bool = False) -> str:
    """Y or N from the accepted spellings; with ``cant_tell`` (an annotator's answer, not a final label) also
    C, "can't tell"."""
    if isinstance(answer, bool):
        return Label.YES if answer else Label.NO
    key = str(answer).strip().lower()
    value = _ANSWERS.get(key) or (_CANT_TELL.get(key) if cant_tell else None)
    if value is None:
        choices = "Y, N or C (can't tell)" if cant_tell else "Y or N"
        raise AnnotationError(f"the answer must be {choices}, not {answer!r}")
    return value


def check_comment(answer: str, quote: str) -> None:
    """A can't-tell answer needs the annotator's comment (in ``quote``): the adjudicator reads it."""
    if answer == Answer.CANT_TELL and not (quote or "").strip():
        raise MissingComment("say why you can't tell: a comment is required with \"can't tell\"")
