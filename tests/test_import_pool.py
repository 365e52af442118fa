"""import_pool: a pool exported as `h r t depth systems` imports back identically; bad files are refused whole."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_pool_round_trip_and_bad_files(storage, tmp_path):
    from pooling.models import Pool, PoolEntry, Sample, System
    from pooling.selectors.pools import pool_entry_array, pool_export_rows, pool_hits, sample_test_indices
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "complex")]
    sample = draw_sample(kg, size=20, seed=5)
    built = build_pool_now(create_pool(sample, systems, depth=3, chunk_size=64))
    rows = pool_export_rows(built)
    sample_file = _write(tmp_path / "my-sample.txt", [str(i) for i in sample_test_indices(sample).tolist()])
    pool_file = _write(tmp_path / "pool.tsv", ["# exported"] + [f"{h}\t{r}\t{t}\t{d}\t{','.join(s)}" for h, r, t, d, s in rows])

    call_command("import_pool", "umls", str(pool_file), "--sample", str(sample_file), "--name", "round-trip",
                 "--sample-name", sample.name, verbosity=0)
    imported = Pool.objects.get(name="round-trip")
    assert imported.sample_id == sample.pk and imported.origin == "imported" and imported.status == "done"
    assert imported.depth == 3
    assert pool_entry_array(imported).tolist() == pool_entry_array(built).tolist()
    assert pool_export_rows(imported) == rows
    # the questions an entry answers are inferred (all of them: a superset of those it was retrieved for)
    imported_hits = {h[:5] for h in pool_hits(imported)}
    assert {h[:5] for h in pool_hits(built)} <= imported_hits
    assert {h[5] for h in pool_hits(imported)} == {None}  # per-system ranks are not in the file

    # a sample given as triples, a pool without depth/systems, known triples skipped
    from pooling.selectors.pools import entity_keys, known_triples
    from pooling.selectors.kg import kg_relation_keys

    keys, rel_keys = entity_keys(kg), kg_relation_keys(kg)
    from pooling.selectors.pools import sample_triples

    triples = sample_triples(sample)
    triple_file = _write(tmp_path / "triples.txt", [f"{keys[h]}\t{rel_keys[r]}\t{keys[t]}" for h, r, t in triples.tolist()])
    first_test = triples[0]
    plain = [f"{h}\t{r}\t{t}" for h, r, t, _d, _s in rows[:5]] + [
        f"{keys[first_test[0]]}\t{rel_keys[first_test[1]]}\t{keys[first_test[2]]}"]  # known (a test triple)
    call_command("import_pool", "umls", str(_write(tmp_path / "plain.tsv", plain)), "--sample", str(triple_file),
                 "--sample-name", "other", verbosity=0)
    plain_pool = Pool.objects.get(name="plain")
    assert plain_pool.entries.count() == 5 and set(plain_pool.entries.values_list("depth", flat=True)) == {None}
    assert plain_pool.depth == 1
    assert Sample.objects.get(name="other").triples.count() == sample.size

    before = (Pool.objects.count(), PoolEntry.objects.count(), System.objects.count(), Sample.objects.count())
    unanswered = None
    test_set = {tuple(t) for t in known_triples(kg).tolist()}
    asked_heads = {(r, t) for h, r, t in triples.tolist()}
    asked_tails = {(h, r) for h, r, t in triples.tolist()}
    for h in range(kg.num_entities):
        for t in range(kg.num_entities):
            r = 0
            if (h, r, t) not in test_set and (r, t) not in asked_heads and (h, r) not in asked_tails:
                unanswered = f"{keys[h]}\t{rel_keys[r]}\t{keys[t]}"
                break
        if unanswered:
            break
    good = [f"{h}\t{r}\t{t}\t{d}\t{','.join(s)}" for h, r, t, d, s in rows[:3]]
    cases = {
        "unanswered": (good + [unanswered + "\t2\tnewsys"], "line 4", "answers no sampled question"),
        "unknown-entity": (good[:1] + ["nope\t" + "\t".join(good[1].split("\t")[1:])], "line 2", "unknown entity"),
        "bad-depth": (good[:2] + ["\t".join(good[2].split("\t")[:3] + ["x", "distmult"])], "line 3", "depth"),
        "duplicate": (good + [good[0]], "line 4", "listed twice"),
        "columns": (good + ["a\tb"], "line 4", "expected"),
    }
    for name, (lines, where, message) in cases.items():
        path = _write(tmp_path / f"{name}.tsv", lines)
        with pytest.raises(CommandError) as error:
            call_command("import_pool", "umls", str(path), "--sample", str(sample_file), "--sample-name", "fresh",
                         verbosity=0)
        assert f"{path}:{where.split()[1]}" in str(error.value) and message in str(error.value), str(error.value)
    bad_sample = _write(tmp_path / "bad-sample.txt", ["0", "999999"])
    with pytest.raises(CommandError, match=r"bad-sample.txt:2: test index 999999"):
        call_command("import_pool", "umls", str(pool_file), "--sample", str(bad_sample), verbosity=0)
    after = (Pool.objects.count(), PoolEntry.objects.count(), System.objects.count(), Sample.objects.count())
    assert after == before  # nothing half-written: no new pool, sample or system ("newsys")
