"""Guidelines set outside the manage page (issue 15): the campaign file's ``[guidelines]`` table (read, applied,
exported back), the campaign settings API and the Django admin, each checked like the manage page."""
from __future__ import annotations

import dataclasses

import pytest
from django.forms.models import model_to_dict
from rest_framework.test import APIClient

from annotation.admin import CampaignForm
from annotation.lib.campaign_file import CampaignFileError, parse_campaign_text, spec_to_toml
from annotation.services.campaign_apply import _Steps
from annotation.services.campaign_export import campaign_to_spec
from tests._annotation_web_support import NAT, member, nationality_campaign
from tests._campaign_file_support import campaign_toml

GUIDELINES = f'\n[guidelines]\ncampaign = """\nUse **Wikipedia**.\nSay "No" when unsure."""\n"{NAT}" = "Citizenship only."\n'


def test_campaign_file_reads_and_writes_the_guidelines_table():
    spec = parse_campaign_text(campaign_toml(extra=GUIDELINES))
    assert spec.guidelines == {"campaign": 'Use **Wikipedia**.\nSay "No" when unsure.', NAT: "Citizenship only."}
    again = parse_campaign_text(spec_to_toml(spec))
    assert again.guidelines == spec.guidelines
    assert parse_campaign_text(campaign_toml()).guidelines == {}
    with pytest.raises(CampaignFileError, match=r":\d+: guidelines.campaign must be a string"):
        parse_campaign_text(campaign_toml(extra="\n[guidelines]\ncampaign = 3\n"))


@pytest.mark.django_db
def test_campaign_file_apply_sets_guidelines_refuses_unknown_relations_and_export_keeps_them(tmp_path):
    campaign = nationality_campaign(tmp_path)
    spec = dataclasses.replace(parse_campaign_text(campaign_toml(name="nat")),
                               guidelines={"campaign": "Be *careful*.", NAT: "Citizenship.", "/no/such": "x"})
    kg = campaign.pool.sample.kg
    planned = _Steps(spec, dry_run=True)
    planned.guidelines(kg, campaign)
    assert [a.kind for a in planned.plan.actions] == ["refuse", "create"]
    campaign.refresh_from_db()
    assert campaign.guidelines == ""  # a plan writes nothing

    steps = _Steps(spec, dry_run=False)
    steps.guidelines(kg, campaign)
    campaign.refresh_from_db()
    assert campaign.guidelines == "Be *careful*." and campaign.relation_guidelines == {NAT: "Citizenship."}
    exported, _notes = campaign_to_spec(campaign)
    assert exported.guidelines == {"campaign": "Be *careful*.", NAT: "Citizenship."}
    same = dataclasses.replace(spec, guidelines=exported.guidelines)
    kept = _Steps(same, dry_run=True)
    kept.guidelines(kg, campaign)
    assert [a.kind for a in kept.plan.actions] == ["keep"]


@pytest.mark.django_db
def test_settings_api_sets_guidelines_for_campaign_admins(tmp_path):
    campaign = nationality_campaign(tmp_path)
    url = f"/api/v1/campaigns/{campaign.name}/"
    annotator = APIClient()
    annotator.force_authenticate(member(campaign, "ann", "annotator"))
    assert annotator.patch(url, {"guidelines": "mine"}, format="json").status_code == 403
    boss = APIClient()
    boss.force_authenticate(member(campaign, "boss", "admin"))
    changed = boss.patch(url, {"guidelines": "Read *this*.", "relation_guidelines": {NAT: "Citizenship."}},
                         format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["guidelines"] == "Read *this*."
    assert changed.json()["relation_guidelines"] == {NAT: "Citizenship."}
    bad = boss.patch(url, {"relation_guidelines": {"/no/such": "x"}}, format="json")
    assert bad.status_code == 400 and "no relation" in bad.content.decode()
    campaign.refresh_from_db()
    assert campaign.relation_guidelines == {NAT: "Citizenship."}


@pytest.mark.django_db
def test_admin_form_checks_relation_guidelines(tmp_path):
    campaign = nationality_campaign(tmp_path)
    data = model_to_dict(campaign)
    data["members"] = [member(campaign, "ann", "annotator").pk]
    data.update(allowed_domains='["wikipedia.org"]', guidelines="  Careful.  ",
                relation_guidelines='{"/no/such": "x"}')
    form = CampaignForm(data=data, instance=campaign)
    assert not form.is_valid() and "no relation" in str(form.errors["relation_guidelines"])
    data["relation_guidelines"] = f'{{"{NAT}": "Citizenship.", "/people/person/other": " "}}'
    form = CampaignForm(data=data, instance=campaign)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["guidelines"] == "Careful."
    assert form.cleaned_data["relation_guidelines"] == {NAT: "Citizenship."}


@pytest.mark.django_db
def test_browser_line_ends_are_stored_as_plain_newlines(tmp_path):
    """A browser sends CRLF from a textarea: stored (and exported) as LF, so the same guidelines typed on the site
    or written in a campaign file are the same version (found by trying the site)."""
    from annotation.services.guidelines import set_guidelines

    campaign = nationality_campaign(tmp_path)
    assert set_guidelines(campaign, "Line one\r\nLine two\r\n", {NAT: "a\r\nb"})
    campaign.refresh_from_db()
    assert campaign.guidelines == "Line one\nLine two"
    assert campaign.relation_guidelines == {NAT: "a\nb"}
    assert not set_guidelines(campaign, "Line one\nLine two", {NAT: "a\nb"})  # no new version
