"""The case study pipeline (issue 7) in small: the FB15k-237 published sample prefix, and the whole pipeline on a
cut-down sample.

Training on FB15k-237 costs about a minute per epoch per model even at dim 8 on the 2-core CI machine (measured:
53 s for one DistMult epoch, + 9 s for its test MRR), so the end-to-end run trains on the bundled UMLS with a
"published" campaign folder made here (seed-42 sample indices + a judgments file); the FB15k-237-specific part
(the seed-42 draw equals the published sample, the cut-down sample is its prefix) runs the pipeline's first two
steps on the real data.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests._pool_support import UMLS, storage  # noqa: F401

pytestmark = pytest.mark.django_db


def _config(tmp_path, data_dir, pooled_dir, **kwargs):
    from evaluation.services.case_study import CaseStudyConfig

    return CaseStudyConfig(data_dir=Path(data_dir), pooled_dir=Path(pooled_dir), out=tmp_path / "out", **kwargs)


@pytest.mark.slow
def test_fb15k237_cut_down_sample_is_the_published_prefix(storage, shared_data, tmp_path):
    from evaluation.services.case_study import step_kg, step_sample
    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys, sample_triples

    config = _config(tmp_path, shared_data / "fb15k-237", shared_data / "fb15k-237-pooled", sample_size=30)
    kg, detail, reused = step_kg(config)
    assert not reused and detail["test"] == 20466
    sample, detail, reused = step_sample(config, kg)
    assert not reused and detail["equals_published"] and detail["equals_published_prefix"]
    assert detail["drawn_size"] == 1023 and sample.size == 30
    keys, relations = entity_keys(kg), kg_relation_keys(kg)
    published = [tuple(line.split("\t")) for line in
                 (shared_data / "fb15k-237-pooled" / "sample.txt").read_text().splitlines()[:30]]
    assert [(keys[h], relations[r], keys[t]) for h, r, t in sample_triples(sample).tolist()] == published
    # idempotent: asking again reuses both
    assert step_kg(config)[2] and step_sample(config, kg)[2]


def _umls_campaign_folder(folder: Path) -> tuple[Path, list[int]]:
    """A "published" campaign on UMLS: a seed-42 sample of 60 test triples and judgments of candidate triples."""
    folder.mkdir()
    test = [tuple(line.split()) for line in (UMLS / "test.txt").read_text().splitlines() if line.strip()]
    known = {tuple(line.split()) for split in ("train", "valid", "test")
             for line in (UMLS / f"{split}.txt").read_text().splitlines() if line.strip()}
    indices = sorted(random.Random(42).sample(range(len(test)), 60))
    (folder / "sample_idxs.txt").write_text("".join(f"{i}\n" for i in indices))
    entities = sorted({e for h, _r, t in known for e in (h, t)})
    rng = random.Random(7)
    lines = {}
    for index in indices[:30]:
        h, r, t = test[index]
        lines[(h, r, t)] = "Y"
        for e in rng.sample(entities, 40):
            for triple in ((h, r, e), (e, r, t)):
                if triple not in known:
                    lines[triple] = "Y" if rng.random() < 0.15 else "N"
    (folder / "judgments.tsv").write_text("".join(f"{h}\t{r}\t{t}\t{y}\n" for (h, r, t), y in lines.items()))
    return folder, indices


def test_case_study_pipeline_on_a_cut_down_sample(storage, tmp_path):
    from evaluation.services.case_study import run_case_study
    from pooling.models import Pool
    from pooling.selectors.pools import known_triples, pool_export_rows, sample_test_indices

    pooled, indices = _umls_campaign_folder(tmp_path / "pooled")
    config = _config(tmp_path, UMLS, pooled, kg_name="umls", profile="tiny", systems=("distmult", "complex", "transe"),
                     sample_size=30, analyses=True, figures=False)
    logged: list[str] = []
    result = run_case_study(config, log=logged.append)
    data = result.data
    assert not any(result.reused().values())

    # sample: the first 30 of the seed-42 draw, which equals the "published" indices
    pool = Pool.objects.get(name=data["pool"]["name"])
    assert data["sample"]["equals_published"] and data["sample"]["equals_published_prefix"]
    assert sample_test_indices(pool.sample).tolist() == indices[:30]

    # pool: depth 10, three systems, no known triple
    rows = pool_export_rows(pool)
    pool_keys = {(h, r, t) for h, r, t, _depth, _systems in rows}
    known = {tuple(line.split()) for split in ("train", "valid", "test")
             for line in (UMLS / f"{split}.txt").read_text().splitlines() if line.strip()}
    assert pool_keys and not pool_keys & known
    assert data["pool"]["known_triples_in_pool"] == 0 and len(known_triples(pool.sample.kg)) == len(known)
    assert data["pool"]["entries"] == len(rows) and all(1 <= d <= 10 for _h, _r, _t, d, _s in rows)
    assert set(data["pool"]["per_system"]) == {"distmult-tiny", "complex-tiny", "transe-tiny"}

    # coverage: the same numbers as plain set arithmetic on judgments.tsv
    judged = {}
    for line in (pooled / "judgments.tsv").read_text().splitlines():
        h, r, t, label = line.split("\t")
        judged[(h, r, t)] = label
    coverage = data["coverage"]
    covered = pool_keys & set(judged)
    assert coverage["covered"] == len(covered) > 0
    assert coverage["covered_yes"] == sum(judged[k] == "Y" for k in covered)
    assert coverage["not_covered"] == len(pool_keys - set(judged))
    sampled = {tuple(line.split()) for i, line in enumerate((UMLS / "test.txt").read_text().splitlines()) if i in indices[:30]}
    published_pool = {k for k in judged if k not in sampled}  # every judged line answers a sampled question
    assert coverage["published_pool_on_our_questions"] == len(published_pool)
    assert coverage["published_pool_not_in_ours"] == len(published_pool - pool_keys)
    assert sum(row["covered"] for row in coverage["per_depth"]) == len(covered)
    items = coverage["campaign_items"]
    assert sum(items.values()) == len(pool_keys) and items.get("imported", 0) == len(covered)
    assert data["filter"]["labelled_n"] == items.get("auto_negative", 0) + coverage["filtered_judged"]
    assert items.get("pending", 0) == coverage["uncovered_after_filter"] == coverage["left_to_judge"]

    # evaluation: a table for every system on sparse and completed labels, tau, depth curve, breakdown
    evaluation = data["evaluate"]
    for set_name in ("sparse", "completed"):
        assert {row["system"] for row in evaluation["tables"][set_name]} == set(data["pool"]["per_system"])
        for row in evaluation["tables"][set_name]:
            assert 0 < row["micro_MRR"] <= 1 and 0 <= row["PROBE"] <= 1
    assert evaluation["label_sets"]["sparse"]["positives"] == 30
    assert evaluation["label_sets"]["completed"]["positives"] == 30 + sum(
        judged[k] == "Y" for k in published_pool)
    assert {row["metric"] for row in evaluation["kendall"]} >= {"micro_MRR", "macro_MRR", "PROBE"}
    assert [row["depth"] for row in evaluation["depth_curve"]] == list(range(11))
    assert {row["group"].split("/")[0] for row in evaluation["breakdown_micro_mrr"]} >= {"all", "N-N"}
    out = tmp_path / "out"
    summary = json.loads((out / "case_study.json").read_text())
    assert summary["systems"]["systems"][0]["published_test_mrr"] is not None
    assert "## Kendall's tau-b" in (out / "report.md").read_text()
    assert (out / "evaluation" / "metrics.csv").is_file()

    # second run: every step reused, same numbers
    again = run_case_study(config, log=logged.append)
    assert all(again.reused().values()), again.reused()
    assert again.data["evaluate"]["tables"] == evaluation["tables"]
    assert again.data["coverage"]["covered"] == coverage["covered"]
    assert any("reused" in line for line in logged)
