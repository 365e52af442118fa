"""The columns the judging API's plain statements leave out of the rows they load (issue 21): texts and JSON that can
be large and that no next-item or submit reads. A KG's type labels are 530 KB for CoDEx (3,443 types): loaded and
parsed with every submit they cost 4 ms of Python, 2.6x the rest of the submit. The instances have these fields
deferred, as ``QuerySet.defer`` leaves them: reading one loads it (a query, which the cost tests would count)."""
from __future__ import annotations

from annotation.models import Campaign
from pooling.models import KnowledgeGraph, Pool

LEFT_OUT = {
    Campaign: frozenset({"description", "guidelines", "relation_guidelines"}),
    KnowledgeGraph: frozenset({"description", "type_labels"}),
    Pool: frozenset({"error"}),
}


def left_out(model) -> frozenset[str]:
    """The fields of ``model`` that the plain statements do not load (none for the models not named above)."""
    return LEFT_OUT.get(model, frozenset())
