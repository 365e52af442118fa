"""The scores policy of the run and score-matrix importers (README "Working with your own data"):

- TREC runs: NaN and +inf are refused (test_import_hostile_inputs.py); a line scored -inf means "not retrieved":
  the ranking equals the run's without that line, and the lines are counted in the output, not dropped silently.
- Score matrices: NaN and -inf mean "not scored"; questions with no finite score are counted in the output; +inf
  and an all-unscored matrix are refused (test_import_hostile_inputs.py).
- ``--k`` above the number of candidates is the full ranking (the most candidates a question has).
"""
from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command

from tests._annotation_support import write_kg
from tests._pool_support import storage  # noqa: F401
from tests.test_import_hostile_inputs import GOOD_RUN, NUM_ENTITIES, NUM_QUESTIONS, TEST, TRAIN, VALID

pytestmark = pytest.mark.django_db


@pytest.fixture
def sample(tmp_path, storage):
    from pooling.models import Sample
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import create_sample

    kg = import_kg("fz", write_kg(tmp_path / "fz", TRAIN, VALID, TEST))
    return create_sample(kg, name="all", method=Sample.Method.FILE, seed=None, indices=[0, 1, 2])


def _result(name: str):
    from pooling.models import Ranking
    from pooling.selectors.pools import ranking_result

    return ranking_result(Ranking.objects.get(system__name=name))


def test_minus_inf_run_lines_are_not_retrieved_and_reported(sample, tmp_path):
    # head1 asks (?, r, e5): e2 is its answer, scored -inf here; e7 is a plain candidate scored -inf
    extra = "head1 Q0 e2 1 -inf ext\nhead0 Q0 e7 4 -inf ext\n"
    (tmp_path / "with.run").write_text(GOOD_RUN + extra)
    (tmp_path / "without.run").write_text(GOOD_RUN)
    out = io.StringIO()
    call_command("import_run", "fz", "all", str(tmp_path / "with.run"), "--name", "with", stdout=out, verbosity=0)
    call_command("import_run", "fz", "all", str(tmp_path / "without.run"), "--name", "without", stdout=io.StringIO(),
                 verbosity=0)
    assert out.getvalue().splitlines()[1] == "2 run lines scored -inf count as not retrieved (the first on line 10)"
    with_inf, without = _result("with"), _result("without")
    for field in ("topk_entities", "greater", "ties", "num_candidates"):
        assert np.array_equal(getattr(with_inf, field), getattr(without, field)), field
    assert np.array_equal(with_inf.ranks(), without.ranks())
    # the -inf answer ranks like an unretrieved one: after the 0 retrieved candidates of head1, tied with the rest
    from pooling.selectors.pools import sample_questions

    head1 = sample_questions(sample).qids.index("head1")
    position = int(np.flatnonzero(with_inf.target_questions() == head1)[0])
    assert with_inf.greater[position] == 0 and with_inf.ranks("pessimistic")[position] == with_inf.num_candidates[position]


def test_unscored_matrix_rows_are_counted(sample, tmp_path):
    from pooling.models import System

    matrix = np.arange(NUM_QUESTIONS * NUM_ENTITIES, dtype=np.float64).reshape(NUM_QUESTIONS, NUM_ENTITIES)
    matrix[1] = np.nan
    matrix[4] = -np.inf
    matrix[2, :3] = np.nan  # partly scored: still scored
    np.save(tmp_path / "m.npy", matrix)
    out = io.StringIO()
    call_command("import_scores", "fz", "all", str(tmp_path / "m.npy"), "--name", "m", stdout=out, verbosity=0)
    assert out.getvalue().splitlines()[1].startswith("2 questions have no finite score")
    assert System.objects.get(name="m").config["unscored_questions"] == 2
    result = _result("m")
    assert (result.topk_entities[[1, 4]] == -1).all() and (result.topk_entities[[0, 2, 3, 5]] >= 0).any(axis=1).all()


def _most_candidates() -> int:
    """Brute force: the largest number of candidates of a question of sample `all` (entities minus the known
    answers of the question, train + valid + test)."""
    known = set(TRAIN + VALID + TEST)
    entities = {f"e{i}" for i in range(NUM_ENTITIES)}
    most = 0
    for h, r, t in TEST:
        most = max(most, len([e for e in entities if (e, r, t) not in known]),
                   len([e for e in entities if (h, r, e) not in known]))
    return most


@pytest.mark.parametrize("k, expected", [("2000000000", None), ("3", 3)])
def test_k_above_the_candidates_is_the_full_ranking(sample, tmp_path, k, expected):
    np.save(tmp_path / "m.npy", np.random.default_rng(0).random((NUM_QUESTIONS, NUM_ENTITIES)))
    call_command("import_scores", "fz", "all", str(tmp_path / "m.npy"), "--name", "m", "--k", k,
                 stdout=io.StringIO(), verbosity=0)
    assert _result("m").k == (expected or _most_candidates())
