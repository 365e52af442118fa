"""Rushed answers (issue 8): judgments and annotators far faster than the campaign median are flagged."""
from __future__ import annotations

import pytest

from annotation.models import Judgment, Role
from annotation.selectors.quality import rushed_report
from tests._annotation_quality_support import judge_all
from tests._annotation_support import star_campaign, users


@pytest.mark.django_db
def test_rushed_judgments_and_annotators(tmp_path):
    campaign = star_campaign(tmp_path, items=6, name="rush", rushed_factor=0.25)
    careful, quick, hasty = users(campaign, Role.ANNOTATOR, 3)
    times = {careful.pk: [20000, 22000, 18000, 1500], quick.pk: [12000, 14000, 16000, 15000], hasty.pk: [900, 1200, 800, 1000]}

    def ms(item, user):
        return times[user.pk].pop(0)

    judge_all(campaign, [careful, quick, hasty], lambda item, user: "Y", ms_of=ms)
    report = rushed_report(campaign)
    all_times = sorted(Judgment.objects.values_list("time_on_task_ms", flat=True))
    assert len(all_times) == 12
    assert report.median_ms == pytest.approx((all_times[5] + all_times[6]) / 2)  # (12000 + 14000) / 2
    assert report.limit_ms == pytest.approx(0.25 * 13000)
    flagged = {(j.username, j.time_on_task_ms) for j in report.judgments}
    assert flagged == {(careful.username, 1500), (hasty.username, 900), (hasty.username, 1200),
                       (hasty.username, 800), (hasty.username, 1000)}
    assert [a.username for a in report.flagged_annotators] == [hasty.username]
    pace = {a.username: a for a in report.annotators}
    assert pace[hasty.username].median_ms == 950 and pace[careful.username].rushed == 1
    assert not pace[careful.username].flagged
    # the admin-set factor moves the limit
    campaign.rushed_factor = 0.05
    campaign.save()
    assert rushed_report(campaign).judgments == []


@pytest.mark.django_db
def test_no_timed_judgments(tmp_path):
    campaign = star_campaign(tmp_path, items=2, name="rush0")
    report = rushed_report(campaign)
    assert report.median_ms is None and report.judgments == [] and report.annotators == []
