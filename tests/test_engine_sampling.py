"""Sampling: the published FB15k-237 seed-42 sample, its relation KL, and the stratified mode."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import entropy

from pooling.engine.sampling import relation_kl_divergence, sample_test_indices, stratified_sample_indices


def test_matches_python_random() -> None:
    expected = sorted(random.Random(7).sample(range(100), 10))
    assert sample_test_indices(100, 10, seed=7).tolist() == expected


def test_published_fb15k237_sample_and_kl(shared_data: Path) -> None:
    published = [int(x) for x in (shared_data / "fb15k-237-pooled" / "sample_idxs.txt").read_text().split()]
    indices = sample_test_indices(20466, 1023, seed=42)
    assert indices.tolist() == published
    test_rows = [line.split("\t") for line in (shared_data / "fb15k-237" / "test.txt").read_text().splitlines()]
    relation_ids = {r: i for i, r in enumerate(sorted({row[1] for row in test_rows}))}
    relations = np.array([relation_ids[row[1]] for row in test_rows])
    kl = relation_kl_divergence(relations[indices], relations)
    # KL(sample || full), natural log. SPEC 3 quotes 0.0889; KL(full || sample) is infinite, log2 gives
    # 0.149, log10 0.045, Jensen-Shannon 0.028, against train 0.302 - none is 0.0889, so we pin our value.
    # computed independently: relative frequencies of every relation of the test set in the sample (0 for one
    # it lacks) and in the full test set, scipy's KL (natural log)
    sample_counts = Counter(relations[indices].tolist())
    full_counts = Counter(relations.tolist())
    every = sorted(full_counts)
    expected = entropy([sample_counts[r] for r in every], [full_counts[r] for r in every])
    assert kl == pytest.approx(expected, rel=1e-9)
    assert kl == pytest.approx(0.10313, abs=1e-5)  # the figure the README reports
    assert relation_kl_divergence(relations, relations) == 0.0


def test_stratified_keeps_relation_mix() -> None:
    rng = np.random.default_rng(0)
    relations = rng.choice(5, size=1000, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    indices = stratified_sample_indices(relations, 100, seed=3)
    assert indices.size == 100 and np.all(np.diff(indices) > 0)
    full_counts = np.bincount(relations, minlength=5)
    sample_counts = np.bincount(relations[indices], minlength=5)
    assert np.all(np.abs(sample_counts - full_counts / 10) < 1)
    assert relation_kl_divergence(relations[indices], relations) < 1e-3
    np.testing.assert_array_equal(indices, stratified_sample_indices(relations, 100, seed=3))
