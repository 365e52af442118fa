"""import_run: a TREC run of a system is stored as an imported system whose ranking and pool equal the trained
system's; bad run files are refused with file:line and nothing is written."""
from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def test_import_run_pools_like_the_trained_system(storage, tmp_path):
    import torch

    from pooling.kge import model_score_fn
    from pooling.models import Ranking, System
    from pooling.selectors.pools import entity_keys, ranking_result, sample_questions
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.rankings import rank_system
    from pooling.services.samples import draw_sample
    from pooling.services.systems import load_system_model

    kg = import_umls()
    trained = train_tiny(kg, "distmult")
    sample = draw_sample(kg, size=15, seed=11)
    sq = sample_questions(sample)
    score = model_score_fn(load_system_model(trained, device="cpu"))
    keys = entity_keys(kg)
    lines = []
    for row, qid in enumerate(sq.qids):
        scores = score(torch.tensor([sq.questions.anchor[row]]), torch.tensor([sq.questions.relation[row]]),
                       int(sq.questions.side[row]))[0].numpy()
        for rank, entity in enumerate(np.argsort(-scores, kind="stable").tolist(), start=1):
            lines.append(f"{qid} Q0 {keys[entity]} {rank} {float(scores[entity])!r} ext")
    run_file = tmp_path / "ext.run"
    run_file.write_text("\n".join(lines) + "\n")

    out = io.StringIO()
    call_command("import_run", "umls", sample.name, str(run_file), "--name", "ext", verbosity=0, stdout=out)
    ext = System.objects.get(name="ext")
    assert ext.origin == "imported" and ext.status == "ready"
    mrr = Ranking.objects.get(system=ext).mrr
    assert out.getvalue().strip() == f"Imported run as system umls/ext: top-{Ranking.objects.get(system=ext).k} on {sample.name}, sample MRR {mrr:.4f}"
    imported = ranking_result(Ranking.objects.get(system=ext))
    reference = ranking_result(rank_system(trained, sample, k=imported.k))
    assert np.array_equal(imported.topk_entities, reference.topk_entities)
    # every entity is in the run: the targets' filtered ranks are exactly the trained ranking's
    assert np.array_equal(imported.num_candidates, reference.num_candidates)
    assert np.array_equal(imported.ranks(), reference.ranks())

    pool_ext = build_pool_now(create_pool(sample, [ext], depth=5))
    pool_trained = build_pool_now(create_pool(sample, [trained], depth=5))
    assert pool_state(pool_ext)[0] == pool_state(pool_trained)[0]

    # bad files: clear error naming file and line, nothing written
    before = (System.objects.count(), Ranking.objects.count(), sorted(p.name for p in storage.rglob("*")))
    good = lines[:3]
    cases = {
        "qid": (good + ["nothead9 Q0 " + keys[0] + " 1 0.5 ext"], ":4:", "not a question of sample"),
        "entity": (good + [f"{sq.qids[0]} Q0 not_an_entity 1 0.5 ext"], ":4:", "not an entity"),
        "columns": (good[:1] + [f"{sq.qids[0]} Q0 {keys[5]} 1 0.5"], ":2:", "expected 6 columns"),
        "score": (good[:2] + [f"{sq.qids[1]} Q0 {keys[7]} 1 high ext"], ":3:", "not a number"),
        "twice": (good + [good[0]], ":4:", "retrieved twice"),
    }
    for name, (bad_lines, where, message) in cases.items():
        path = tmp_path / f"{name}.run"
        path.write_text("\n".join(bad_lines) + "\n")
        with pytest.raises(CommandError) as error:
            call_command("import_run", "umls", sample.name, str(path), "--name", f"bad-{name}", verbosity=0)
        assert f"{path}{where}" in str(error.value) and message in str(error.value), str(error.value)
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_run", "umls", sample.name, str(run_file), "--name", "ext", verbosity=0)
    assert (System.objects.count(), Ranking.objects.count(), sorted(p.name for p in storage.rglob("*"))) == before
