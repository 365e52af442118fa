"""The torch-free list of architectures (web requests, the campaign-file reader) is the list pooling.kge trains."""
from __future__ import annotations

from pooling.engine.architectures import ARCHITECTURE_NAMES
from pooling.kge.models import ARCHITECTURES


def test_the_names_are_the_trained_architectures():
    assert sorted(ARCHITECTURE_NAMES) == sorted(ARCHITECTURES)
