"""The columns the judging API's plain statements leave out of the rows they load (issue 21): texts and JSON that can
be large and that no next-item or submit reads. A KG's type labels are 530 KB for CoDEx (3,443 types): loaded and
parsed with every submit they cost 4 ms of Python, 2.6x the rest of the submit. The instances have these fields
deferred, as ``QuerySet.defer`` leaves them: reading one loads it (a query, which the cost tests would count)."""
from __future__ import annotations

CAMPAIGN = frozenset({"description", "guidelines", "relation_guidelines"})
KNOWLEDGE_GRAPH = frozenset({"description", "type_labels"})
POOL = frozenset({"error"})
