"""Torch set-up shared by the model and training tests."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def single_thread():
    """One intra-op thread: on a shared 2-core machine more threads only fight (4x slower measured). Autouse in
    every test module that imports it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
