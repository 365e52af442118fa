"""The pool's view is kept in a file per pool version (issue 18: rebuilding it read every entry and hit of the
pool, 1.5 s a request at 76,583 entries): a cached view equals the one read from the database, a page view after
the first reads no entry or hit row, and every way a pool changes makes a new version (never a stale view)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.selectors.judging_progress import order_progress
from annotation.selectors.pool_view import build_pool_view, pool_view
from pooling.models import PoolEntry, PoolHit, Question
from pooling.services.pools import write_entries
from tests._judging_order_support import campaign_with_runs

pytestmark = pytest.mark.django_db


def assert_same(got, expected) -> None:
    (view, index), (want_view, want_index) = got, expected
    for name, value in dataclasses.asdict(want_view).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(view, name), value, err_msg=name)
        else:
            assert getattr(view, name) == value, name
    np.testing.assert_array_equal(index.entry_pks, want_index.entry_pks)
    np.testing.assert_array_equal(index.triples, want_index.triples)
    assert (index.system_pks, index.system_names, index.system_architectures, index.qids) == (
        want_index.system_pks, want_index.system_names, want_index.system_architectures, want_index.qids)


def rows_read(run) -> list[str]:
    """Queries of ``run`` that read pool entry or hit rows (not counts or largest keys)."""
    with CaptureQueriesContext(connection) as captured:
        run()
    return [q["sql"] for q in captured.captured_queries
            if '"pooling_poolhit"."rank"' in q["sql"] or '"pooling_poolentry"."depth"' in q["sql"]]


def test_the_cached_view_is_the_database_view_and_reads_no_rows(tmp_path):
    campaign, _items = campaign_with_runs(tmp_path, {"A-1": 4, "B-1": 3}, name="cached")
    pool = campaign.pool
    first = pool_view(pool)
    assert_same(first, build_pool_view(pool))
    assert first[0].item_features is not None and first[0].num_items == 7
    again = []
    assert rows_read(lambda: again.append(pool_view(pool))) == []
    assert_same(again[0], first)
    assert rows_read(lambda: order_progress(campaign)) == []


def test_every_change_of_the_pool_is_a_new_version(tmp_path):
    campaign, _items = campaign_with_runs(tmp_path, {"A-1": 4, "B-1": 3}, name="changes")
    pool = campaign.pool
    pool_view(pool)
    # in place: write_entries moves a hit's rank (same entries, same hit rows)
    hits = list(PoolHit.objects.filter(entry__pool=pool).order_by("pk").values_list(
        "entry__head_id", "entry__relation_id", "entry__tail_id", "system_id", "question_id", "rank"))
    rows = [((h, r, t), s, q, rank + 2 if i == 0 else rank) for i, (h, r, t, s, q, rank) in enumerate(hits)]
    write_entries(pool, rows)
    assert_same(pool_view(pool), build_pool_view(pool))
    assert pool_view(pool)[0].hit_rank.max() == max(rank for *_x, rank in rows)
    # a hit added outside write_entries
    entry = PoolEntry.objects.filter(pool=pool).order_by("pk").last()
    system = pool.systems.order_by("name").first()
    question = Question.objects.filter(sample=pool.sample).order_by("position").first()
    PoolHit.objects.filter(entry=entry).delete()
    PoolHit.objects.create(entry=entry, system=system, question=question, rank=9)
    assert_same(pool_view(pool), build_pool_view(pool))
    assert 9 in pool_view(pool)[0].hit_rank.tolist()
    # an entry deleted
    PoolEntry.objects.filter(pk=entry.pk).delete()
    assert_same(pool_view(pool), build_pool_view(pool))
    assert pool_view(pool)[0].num_items == 6
    # a system leaves the pool (the view's system numbering changes)
    pool.systems.remove(system)
    assert_same(pool_view(pool), build_pool_view(pool))
    assert pool_view(pool)[0].num_systems == 1


def test_an_entry_edited_in_the_admin_is_a_new_version(tmp_path, client):
    campaign, _items = campaign_with_runs(tmp_path, {"A-1": 3}, name="admin")
    pool = campaign.pool
    entry = PoolEntry.objects.filter(pool=pool).order_by("pk").first()
    PoolHit.objects.filter(entry=entry).update(rank=None)  # a hit without a rank counts at the entry's depth
    before = pool_view(pool)
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw"))
    url = f"/admin/pooling/poolentry/{entry.pk}/change/"
    page = client.get(url)
    data = {name: value for name, value in page.context["adminform"].form.initial.items() if value is not None}
    data.update(depth=entry.depth + 5)
    for formset in page.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        data.update({f"{management.prefix}-{key}": value for key, value in management.initial.items()})
        for number, form in enumerate(formset.formset.forms):
            data.update({f"{formset.formset.prefix}-{number}-{key}": value.pk if hasattr(value, "pk") else value
                         for key, value in form.initial.items() if value is not None})
            data[f"{formset.formset.prefix}-{number}-id"] = form.instance.pk
    response = client.post(url, data)
    assert response.status_code == 302, response.context["errors"]
    assert PoolEntry.objects.get(pk=entry.pk).depth == data["depth"]
    after = pool_view(pool)
    assert_same(after, build_pool_view(pool))
    position = int(np.flatnonzero(after[1].entry_pks == entry.pk)[0])
    assert before[0].depth[position] == entry.depth
    assert after[0].depth[position] == data["depth"] == entry.depth + 5
