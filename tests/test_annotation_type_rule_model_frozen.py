"""annotation/lib/type_rule.TypeModel is frozen (issue 19): a model is built once per KG and shared by every
candidate check, so its parts cannot be rebound. Django-free."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from annotation.lib.type_rule import type_rule, types_from_roles


def test_type_model_is_frozen():
    model = types_from_roles(np.array([[0, 0, 1], [2, 0, 3]]), 4, 1)
    with pytest.raises(FrozenInstanceError):
        model.source = "other"
    with pytest.raises(FrozenInstanceError):
        model.constrained = np.zeros(2, dtype=bool)
    # still usable: entity 1 (only a tail of r0) cannot head r0, whose heads 0 and 2 share no role with it
    assert type_rule(np.array([[1, 0, 3], [0, 0, 3]]), model).tolist() == [True, False]
