"""The campaign's evidence policy (issue 15): for which answers a source URL is required, enforced in the service
for the judge page and the API alike, set from the API, the campaign file and kept by backups."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.lib.campaign_file import CampaignFileError, parse_campaign_text
from annotation.lib.evidence import EVIDENCE_POLICIES, source_required
from annotation.models import Campaign, Judgment, Label
from annotation.services import backup_format as fmt
from annotation.services.campaigns import update_settings
from annotation.services.distribution import next_item
from annotation.services.errors import AnnotationError, InvalidSource
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member, nationality_campaign
from tests.test_campaign_file_parse import GOOD

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"
# policy -> (Y needs a source, N needs a source), written out by hand
EXPECTED = {"yes": (True, False), "no": (False, True), "both": (True, True), "never": (False, False)}


def test_the_policy_table():
    assert set(EVIDENCE_POLICIES) == set(EXPECTED)
    for policy, (yes, no) in EXPECTED.items():
        assert (source_required(policy, "Y"), source_required(policy, "N")) == (yes, no)
    with pytest.raises(ValueError, match="unknown evidence policy 'sometimes'"):
        source_required("sometimes", "Y")


@pytest.mark.django_db
@pytest.mark.parametrize("policy", sorted(EXPECTED))
@pytest.mark.parametrize("answer", ["Y", "N"])
def test_the_service_requires_a_source_only_where_the_policy_says(tmp_path, policy, answer):
    campaign = nationality_campaign(tmp_path)
    update_settings(campaign, evidence_policy=policy)
    annotator = member(campaign, "ann", "annotator")
    hand_out = next_item(campaign, annotator)
    with pytest.raises(InvalidSource, match="not a verified source"):  # a source given is always checked
        submit_judgment(hand_out.item, annotator, answer, "https://www.example.com/x")
    required = EXPECTED[policy][answer == "N"]
    if required:
        with pytest.raises(InvalidSource, match="a source URL is required"):
            submit_judgment(hand_out.item, annotator, answer, "  ")
        assert not Judgment.objects.exists()
    else:
        judgment = submit_judgment(hand_out.item, annotator, answer, "")
        assert (judgment.answer, judgment.source_url, judgment.source_domain) == (answer, "", "")
        # a retry without a source is the same judgment, not a conflict
        assert submit_judgment(hand_out.item, annotator, answer, "").pk == judgment.pk


@pytest.mark.django_db
def test_the_judge_page_takes_an_obvious_no_without_a_source_by_default(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    assert campaign.evidence_policy == "yes"
    client.force_login(member(campaign, "ann", "annotator"))
    page = client.get(reverse("annotation:judge_next", args=[campaign.name]), follow=True)
    body = html.unescape(page.content.decode())
    assert "(required for Yes, optional for No)" in body
    url = page.redirect_chain[-1][0]
    data = {"answer": "Y", "source_url": "", "quote": "", "request_id": page.context["form"].initial["request_id"]}
    refused = client.post(url, data)
    assert refused.status_code == 400 and "a source URL is required" in refused.content.decode()
    data["answer"] = "N"
    assert client.post(url, data).status_code == 302
    assert Judgment.objects.get().answer == Label.NO and Judgment.objects.get().source_url == ""
    # the adjudicator's and exports' view of it: "none given", never a broken link
    assert Judgment.objects.filter(source_url="").count() == 1


@pytest.mark.django_db
def test_the_api_sets_the_policy_and_judges_by_it(tmp_path):
    campaign = nationality_campaign(tmp_path)
    admin = member(campaign, "boss", "admin")
    annotator = member(campaign, "ann", "annotator")
    boss = APIClient()
    boss.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=admin)[0].key}")
    bad = boss.patch(f"/api/v1/campaigns/{campaign.name}/", {"evidence_policy": "sometimes"}, format="json")
    assert bad.status_code == 400 and Campaign.objects.get().evidence_policy == "yes"
    changed = boss.patch(f"/api/v1/campaigns/{campaign.name}/", {"evidence_policy": "never"}, format="json")
    assert changed.status_code == 200 and changed.json()["evidence_policy"] == "never"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=annotator)[0].key}")
    hand_out = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()
    saved = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out['hand_out']}/judgment/",
                        {"answer": "Y", "request_id": hand_out["request_id"]}, format="json")
    assert saved.status_code == 201, saved.content
    assert Judgment.objects.get().source_url == ""


def test_the_campaign_file_reads_the_policy_and_refuses_unknown_ones(tmp_path):
    text = GOOD.replace("[judging]\n", '[judging]\nevidence_policy = "both"\n')
    assert parse_campaign_text(text, tmp_path / "c.toml").judging.evidence_policy == "both"
    assert parse_campaign_text(GOOD, tmp_path / "c.toml").judging.evidence_policy == "yes"
    with pytest.raises(CampaignFileError, match="judging.evidence_policy must be one of yes, no, both, never"):
        parse_campaign_text(GOOD.replace("[judging]\n", '[judging]\nevidence_policy = "sometimes"\n'), tmp_path / "c.toml")


@pytest.mark.django_db
def test_update_settings_refuses_unknown_policies_and_backups_keep_the_policy(tmp_path):
    campaign = nationality_campaign(tmp_path)
    with pytest.raises(AnnotationError, match="invalid value for evidence_policy"):
        update_settings(campaign, evidence_policy="sometimes")
    assert update_settings(campaign, evidence_policy="both") == ["evidence_policy"]
    row = fmt.encode_row(campaign, fmt.CAMPAIGN_FIELDS)
    assert fmt.decode_row(Campaign, row, fmt.CAMPAIGN_FIELDS)["evidence_policy"] == "both"
    del row["evidence_policy"]  # a backup written before campaigns had a policy: the default
    assert "evidence_policy" not in fmt.decode_row(Campaign, row, fmt.CAMPAIGN_FIELDS)
