"""What a system's scores could not rank, per label set: the report's "too shallow" counts. Torch-free.

A trained model or a full score matrix ranks everything, so every count below is 0 for them. A TREC run (or a
matrix with -inf / NaN entries) scores only some entities of a question, and may leave out whole questions (the
completion questions of a campaign, when the run was made on the sample's questions only):

- ``questions_not_scored``: questions of the label set the system gave no score at all;
- ``answers_unranked``: micro rankings (question, positive answer) whose answer the system did not score. Micro
  metrics and PROBE still rank it, by convention below every scored candidate and tied with every other unscored
  one (the realistic tie rank among the unretrieved): the number it gets is a guess, this count says how many;
- ``judged_unranked``: judged entities (positives and judged negatives) of the label set's questions the system did
  not score; macro metrics count them as not retrieved (trec_eval).

A run that holds every judged entity (and every candidate it ranks above one) gives exactly the numbers of the
full scores; these counts say how far a run is from that.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from evaluation.services.metrics import MicroRanks, QuestionLabels
from evaluation.services.ranks import JudgedRanks


def coverage_row(jr: JudgedRanks, labels: QuestionLabels, micro: MicroRanks) -> dict[str, Any]:
    """The counts of one system on one label set (see the module doc)."""
    evaluated = labels.evaluated
    answer_index = jr.lookup(micro.question, micro.answer)
    negatives = labels.negatives
    in_set = np.zeros(len(negatives), dtype=bool)
    in_set[evaluated] = True
    negative_rows = negatives.row_ids()
    keep = in_set[negative_rows]
    negative_index = jr.lookup(negative_rows[keep], negatives.values[keep])
    return {
        "questions": int(evaluated.size),
        "questions_not_scored": int((~jr.scored[evaluated]).sum()),
        "answers": int(micro.ranks.size),
        "answers_unranked": int((~jr.retrieved(answer_index)).sum()),
        "judged": int(answer_index.size + negative_index.size),
        "judged_unranked": int((~jr.retrieved(answer_index)).sum() + (~jr.retrieved(negative_index)).sum()),
    }
