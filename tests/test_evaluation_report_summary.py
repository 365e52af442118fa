"""The evaluation report for people (issue 15): a summary first with the systems ranked on the sparse and on the
completed labels side by side and Kendall's tau-b between the two rankings (checked against scipy), a note when
fewer than 5 systems make tau coarse, the best value of each column in bold, a caption on how to read every
figure, and every other section folded."""
from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from scipy.stats import kendalltau

from evaluation.models import EvaluationRun
from evaluation.services.report import FIGURE_FILES
from tests._annotation_web_support import member, nationality_campaign
from tests._pool_support import storage  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

SPARSE = {"alpha": (0.50, 40.0), "beta": (0.30, 55.0), "gamma": (0.42, 38.0), "delta": (0.10, 90.0),
          "eps": (0.25, 60.0), "zeta": (0.35, 47.0)}  # system: (micro_MRR, micro_MR)
COMPLETED = {"alpha": (0.41, 30.0), "beta": (0.47, 29.0), "gamma": (0.45, 33.0), "delta": (0.12, 80.0),
             "eps": (0.20, 70.0), "zeta": (0.30, 41.0)}


def stored_run(campaign, storage_dir, systems: list[str]) -> EvaluationRun:
    """A done run whose summary.json holds the given systems' tables (and every figure named in its files)."""
    tables = {name: [{"system": s, "micro_MRR": values[s][0], "micro_MR": values[s][1]} for s in systems]
              for name, values in (("sparse", SPARSE), ("completed", COMPLETED))}
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign, status="done",
                                       result_dir="evaluation/runs/x", files=["summary.json", *FIGURE_FILES],
                                       summary={"campaign_items": {"decided": 3, "total": 3}})
    folder = storage_dir / "evaluation" / "runs" / "x"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps({"tables": tables, "metrics": ["micro_MRR", "micro_MR"],
                                                     "systems": systems}), encoding="utf-8")
    return run


@pytest.fixture
def client_and_campaign(tmp_path):
    campaign = nationality_campaign(tmp_path)
    client = Client()
    client.force_login(member(campaign, "ann", "annotator"))
    return client, campaign


def summary_section(page: str) -> str:
    return page[page.index('id="summary"'):page.index("</details>", page.index('id="summary"'))]


def column(section: str, index: int) -> list[str]:
    """The index-th cell text of each body row of the summary ranking table."""
    rows = re.findall(r"<tr><td class=\"num\">\d+</td>(.*?)</tr>", section, flags=re.S)
    return [re.sub(r"<.*?>|\(tied \d+\)", "", re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)[index]).strip()
            for row in rows]


def test_the_summary_ranks_both_label_sets_side_by_side_with_scipys_tau(client_and_campaign, storage):
    client, campaign = client_and_campaign
    systems = list(SPARSE)
    run = stored_run(campaign, storage, systems)
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    section = summary_section(page)
    assert page.index('id="summary"') < page.index("Metrics on the sparse labels")
    assert "<details class=\"section\" id=\"summary\" open>" in page

    expected_sparse = sorted(systems, key=lambda s: -SPARSE[s][0])
    expected_completed = sorted(systems, key=lambda s: -COMPLETED[s][0])
    assert column(section, 0) == expected_sparse
    assert column(section, 2) == expected_completed
    assert expected_sparse != expected_completed  # the two rankings differ: the test can tell them apart

    tau = kendalltau([SPARSE[s][0] for s in systems], [COMPLETED[s][0] for s in systems]).statistic
    assert f"<strong>{tau:.3f}</strong>" in section
    assert "summary-coarse" not in section  # 6 systems: no note


def test_fewer_than_five_systems_make_tau_coarse(client_and_campaign, storage):
    client, campaign = client_and_campaign
    run = stored_run(campaign, storage, ["alpha", "beta", "gamma"])
    section = summary_section(client.get(f"/evaluation/{run.pk}/").content.decode())
    assert "Only 3 systems:" in section and "at least 5" in section
    tau = kendalltau([0.50, 0.30, 0.42], [0.41, 0.47, 0.45]).statistic
    assert f"<strong>{tau:.3f}</strong>" in section


def test_the_best_value_of_each_column_is_highlighted(client_and_campaign, storage):
    client, campaign = client_and_campaign
    run = stored_run(campaign, storage, list(SPARSE))
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    start = page.index("Metrics on the sparse labels")
    table = page[start:page.index("</table>", start)]
    best = re.findall(r'<td class="num best"><strong>([\d.]+)</strong>', table)
    # micro_MRR: higher is better; micro_MR: lower is better
    assert best == [f"{max(v[0] for v in SPARSE.values()):.4f}", f"{min(v[1] for v in SPARSE.values()):.4f}"]
    assert table.count("(best)") == 2


def test_every_figure_has_a_caption_and_the_tables_are_folded(client_and_campaign, storage):
    client, campaign = client_and_campaign
    run = stored_run(campaign, storage, list(SPARSE))
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    figures = re.findall(r"<figure>(.*?)</figure>", page, flags=re.S)
    assert len(figures) == len(FIGURE_FILES)
    for name, figure in zip(FIGURE_FILES, figures):
        assert f"files/{name}" in figure
        caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, flags=re.S).group(1)
        assert len(re.sub(r"<.*?>", "", caption).split()) > 20, name  # says how to read it, not only its name
    # only the summary and the figures are open; every table section folds
    opened = re.findall(r"<details[^>]*\bopen\b[^>]*>", page)
    assert opened == ['<details class="section" id="summary" open>', '<details class="section" id="figures" open>']
    assert page.count('<details class="section">') >= 2


def test_ties_share_a_rank_and_a_sparse_only_run_has_no_tau():
    from evaluation.core.summary import ranking_summary

    sparse = [{"system": "a", "micro_MRR": 0.2}, {"system": "b", "micro_MRR": 0.5}, {"system": "c", "micro_MRR": 0.2}]
    summary = ranking_summary({"sparse": sparse}, "micro_MRR")
    assert [(r.rank, r.system) for r in summary.sparse] == [(1, "b"), (2, "a"), (2, "c")]
    assert summary.completed == [] and summary.tau is None and not summary.coarse
