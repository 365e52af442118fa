"""The undo pages (issue 15): the judge page's undo form (Backspace posts it) and "Can't tell" choice, the
"My recent answers" list with an Undo button or the reason, the undo itself (back to the item), refusals."""
from __future__ import annotations

import re

import pytest

from annotation.models import Assignment, Judgment
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db
WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


def test_judge_page_offers_undo_and_can_t_tell(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=1)
    client.force_login(member(campaign, "ann", "annotator"))
    page = client.get(f"/campaigns/{campaign.name}/judge/", follow=True).content.decode()
    assert 'name="answer" value="C"' in page and f'action="/campaigns/{campaign.name}/undo/"' in page
    assert f'href="/campaigns/{campaign.name}/recent/"' in page


def test_undo_the_last_answer_then_judge_it_again(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=2)
    ann = member(campaign, "ann", "annotator")
    client.force_login(ann)
    empty = client.post(f"/campaigns/{campaign.name}/undo/", follow=True)
    assert "no answer to undo" in empty.content.decode()
    handed = next_item(campaign, ann)
    judgment = submit_judgment(handed.item, ann, "N", "")
    response = client.post(f"/campaigns/{campaign.name}/undo/")
    assert response.status_code == 302 and response["Location"] == f"/campaigns/{campaign.name}/judge/{handed.pk}/"
    assert Judgment.all_objects.get(pk=judgment.pk).withdrawn_at is not None
    page = client.get(response["Location"]).content.decode()
    assert "Answer undone" in page and 'id="judge-form"' in page
    saved = client.post(response["Location"], {"answer": "C", "source_url": "", "quote": "ambiguous name"})
    assert saved.status_code == 302
    assert Judgment.objects.get(user=ann).answer == "C"
    submit_judgment(next_item(campaign, ann).item, ann, "N", "")
    done = client.get(f"/campaigns/{campaign.name}/judge/").content.decode()  # nothing left: undo offered there too
    assert "Nothing left for you to judge" in done and f'action="/campaigns/{campaign.name}/undo/"' in done


def test_the_recent_answers_page_says_what_can_be_undone(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=2)
    ann, bob = member(campaign, "ann", "annotator"), member(campaign, "bob", "annotator")
    first = submit_judgment(next_item(campaign, ann).item, ann, "Y", WIKI, quote="British actor")
    submit_judgment(next_item(campaign, bob).item, bob, "Y", WIKI)  # bob answered first's item after ann
    free = submit_judgment(next_item(campaign, ann).item, ann, "C", "", quote="no idea")
    client.force_login(ann)
    page = client.get(f"/campaigns/{campaign.name}/recent/").content.decode()
    assert page.index(f'data-judgment="{free.pk}"') < page.index(f'data-judgment="{first.pk}"')  # newest first
    assert f'name="judgment" value="{free.pk}"' in page and f'name="judgment" value="{first.pk}"' not in page
    assert "Cannot undo: someone else has worked on this item since your answer." in page
    assert "Comment: no idea" in page
    refused = client.post(f"/campaigns/{campaign.name}/undo/", {"judgment": first.pk}, follow=True)
    assert "Cannot undo: someone else has worked on this item since your answer." in refused.content.decode()
    assert Judgment.objects.filter(pk=first.pk).exists()
    client.force_login(bob)
    other = client.post(f"/campaigns/{campaign.name}/undo/", {"judgment": free.pk}, follow=True)
    assert "Cannot undo: you can undo only your own answers" in other.content.decode()
    client.force_login(ann)
    done = client.post(f"/campaigns/{campaign.name}/undo/", {"judgment": free.pk})
    reopened = Assignment.objects.get(item=free.item, user=ann)
    assert done["Location"] == f"/campaigns/{campaign.name}/judge/{reopened.pk}/" and reopened.state == "open"


def test_the_agreement_page_counts_can_t_tell(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=1)
    ann, bob = member(campaign, "ann", "annotator"), member(campaign, "bob", "annotator")
    submit_judgment(next_item(campaign, ann).item, ann, "C", "", quote="no idea")
    submit_judgment(next_item(campaign, bob).item, bob, "N", "")
    client.force_login(member(campaign, "boss", "admin"))
    page = client.get(f"/campaigns/{campaign.name}/manage/agreement/").content.decode()
    assert '<th class="num">Can\'t tell</th>' in page
    cells = re.search(r"<td>all</td>(.*?)</tr>", page, re.S).group(1)
    # 1 item, 1 with a can't tell, % agreement 0 (a disagreement), kappa / AC1 / alpha undefined (no Y/N pair)
    assert re.findall(r'<td class="num">([^<]*)</td>', cells) == ["1", "1", "0.000", "—", "—", "—"]
