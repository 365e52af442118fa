"""annotation.lib.evidence, Django-free: which answers need a source under each policy, and the words shown."""
from __future__ import annotations

import pytest

from annotation.lib import evidence
from annotation.lib.evidence import describe, source_required

# the whole table, written out by hand from the policy names (policy, answer) -> source required
EXPECTED = {
    ("yes", "Y"): True, ("yes", "N"): False,
    ("no", "Y"): False, ("no", "N"): True,
    ("both", "Y"): True, ("both", "N"): True,
    ("never", "Y"): False, ("never", "N"): False,
}


@pytest.mark.parametrize(("policy", "answer"), sorted(EXPECTED))
def test_source_required_follows_the_policy_table(policy: str, answer: str) -> None:
    assert source_required(policy, answer) is EXPECTED[policy, answer]


def test_an_unknown_answer_never_needs_a_source() -> None:
    assert source_required("both", "?") is False


def test_unknown_policy_is_a_clear_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError) as error:
        source_required("sometimes", "Y")
    assert str(error.value) == "unknown evidence policy 'sometimes'; policies: yes, no, both, never"
    assert error.value.__cause__ is None and error.value.__suppress_context__


@pytest.mark.parametrize(("policy", "words"), [
    ("yes", "required for Yes, optional for No"),
    ("no", "required for No, optional for Yes"),
    ("both", "required"),
    ("never", "optional"),
])
def test_describe_in_plain_words(policy: str, words: str) -> None:
    assert describe(policy) == words


def test_defaults_and_choices() -> None:
    assert evidence.DEFAULT_EVIDENCE_POLICY == "yes"
    assert evidence.NO_SOURCE_GROUP == "(no source)"
    assert [value for value, _ in evidence.EVIDENCE_CHOICES] == ["yes", "no", "both", "never"]
    assert dict(evidence.EVIDENCE_CHOICES)["never"] == "A source is optional"
    assert dict(evidence.EVIDENCE_CHOICES)["yes"] == "A source is required for Yes"
    assert dict(evidence.EVIDENCE_CHOICES)["no"] == "A source is required for No"
    assert dict(evidence.EVIDENCE_CHOICES)["both"] == "A source is required for every answer"
