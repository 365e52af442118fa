"""annotation/lib/type_rule.types_from_entity_data with incomplete declarations (issue 19): a domain without a
range (or a range without a domain) declares nothing, and an empty type name, even one that the entity data
lists, never declares a side: those sides take the entities observed in train. Django-free."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.type_rule import TypeOptions, type_rule, types_from_entity_data

TYPES = [["city"], ["city"], ["human"], ["country"], ["human"]]
TRAIN = np.array([[0, 0, 3]])
OBSERVED = [[1, 0, 0, 0, 0], [0, 0, 0, 1, 0]]  # heads of r0: 0; tails: 3


@pytest.mark.parametrize("domain, range_", [(["city"], None), (None, ["country"]), (None, None)])
def test_half_a_declaration_declares_nothing(domain, range_):
    model = types_from_entity_data(TRAIN, TYPES, 1, domain, range_, TypeOptions(min_support=1))
    assert model.reference.toarray().astype(int).tolist() == OBSERVED
    # entity 1 is a city like the observed head 0: compatible; the human 4 is not
    assert type_rule(np.array([(1, 0, 3), (4, 0, 3)]), model).tolist() == [False, True]


def test_an_empty_type_name_in_the_data_declares_no_side():
    types = [["city", ""], ["city"], ["human", ""], ["country"], ["human"]]
    model = types_from_entity_data(TRAIN, types, 1, [""], [""], TypeOptions(min_support=1))
    assert "" in model.type_names
    assert model.reference.toarray().astype(int).tolist() == OBSERVED
    assert model.constrained.tolist() == [True, True]
