"""Issue 16: choosing the protocols of an evaluation run (the /evaluation/new form, the API, the campaign file)
refuses what cannot be computed before a run exists -- judged negatives without judgments, type-consistent
corruptions on a KG without types, a dataset folder without its negatives files, K < 1, unknown names -- and keeps
the choices on the run."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests._pool_support import import_umls, storage  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sample(storage):
    from pooling.services.samples import draw_sample

    return draw_sample(import_umls(), size=5, seed=0)


def form(sample, **fields):
    from evaluation.views import NewRunForm

    data = {"sample": sample.pk, "policy": "realistic", "negatives_seed": 0, "pair_k": 100, **fields}
    return NewRunForm(data=data)


def test_the_form_refuses_negatives_it_cannot_have(sample, tmp_path):
    judged = form(sample, protocols=["classification"], negatives=["judged"])
    assert not judged.is_valid() and "campaign or a labels file" in str(judged.errors["negatives"])
    typed = form(sample, protocols=["classification"], negatives=["corrupted-typed"])
    assert not typed.is_valid() and "entity types" in str(typed.errors["negatives"])  # UMLS has none
    (tmp_path / "valid_negatives.txt").write_text("", encoding="utf-8")
    folder = form(sample, protocols=["classification"], negatives=["dataset"], negatives_dir=str(tmp_path))
    assert not folder.is_valid() and "test_negatives.txt" in str(folder.errors["negatives"])
    assert not form(sample, protocols=["pair_ranking"], pair_k=0).is_valid()
    assert not form(sample, protocols=["telepathy"]).is_valid()
    # a labels file makes judged negatives possible; pair ranking alone needs no negatives at all
    labels = tmp_path / "judgments.tsv"
    labels.write_text("C0001\tR\tC0002\tN\n", encoding="utf-8")
    ok = form(sample, protocols=["classification", "pair_ranking"], negatives=["judged", "corrupted-random"],
              labels_file=str(labels), pair_k=7, negatives_seed=3)
    assert ok.is_valid(), ok.errors
    assert ok.protocol_options() == {"protocols": ("classification", "pair_ranking"),
                                     "negatives": ("judged", "corrupted-random"), "negatives_dir": "",
                                     "negatives_seed": 3, "pair_k": 7}
    assert form(sample, protocols=["pair_ranking"], negatives=["judged"]).is_valid()  # negatives unused


def test_the_page_offers_the_protocols(sample):
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.create_user("staff", is_staff=True))
    page = client.get("/evaluation/new/").content.decode()
    for text in ("triple classification", "entity-pair ranking", "property prediction", "corrupted, type-consistent",
                 "Pair ranking K"):
        assert text in page, text


def test_the_api_keeps_the_choices_and_refuses_bad_ones(sample):
    from django.contrib.auth.models import User

    from evaluation.models import EvaluationRun

    api = APIClient()
    api.force_authenticate(User.objects.create_user("staff", is_staff=True))
    url = "/api/v1/evaluations/"
    body = {"kg": sample.kg.name, "sample": sample.name}
    for options, message in (({"protocols": ["telepathy"]}, "telepathy"),
                             ({"protocols": ["classification"], "negatives": ["judged"]}, "campaign"),
                             ({"protocols": ["classification"], "negatives": ["corrupted-typed"]}, "entity types"),
                             ({"protocols": ["pair_ranking"], "pair_k": 0}, "pair_k")):
        response = api.post(url, {**body, "options": options}, format="json")
        assert response.status_code == 400 and message in response.content.decode(), (options, response.content)
    assert not EvaluationRun.objects.exists()
    response = api.post(url, {**body, "options": {"protocols": ["pair_ranking", "property"], "pair_k": 5}},
                        format="json")
    assert response.status_code == 202, response.content
    options = EvaluationRun.objects.get().options
    assert options["protocols"] == ["pair_ranking", "property"] and options["pair_k"] == 5
    assert response.json()["options"]["protocols"] == ["pair_ranking", "property"]


def test_the_campaign_file_declares_the_protocols():
    from annotation.lib.campaign_file import CampaignFileError, parse_campaign_text
    from evaluation.services.result import EvaluationOptions
    from tests._campaign_file_support import campaign_toml

    text = campaign_toml(extra='\n[evaluation]\nprotocols = ["classification", "property"]\n'
                               'negatives = ["judged", "corrupted-random"]\npair_k = 20\nnegatives_seed = 4\n')
    options = EvaluationOptions(**parse_campaign_text(text).evaluation.options())
    assert options.protocols == ("classification", "property") and options.negatives == ("judged", "corrupted-random")
    assert options.pair_k == 20 and options.negatives_seed == 4
    with pytest.raises(CampaignFileError, match="telepathy"):
        parse_campaign_text(campaign_toml(extra='\n[evaluation]\nprotocols = ["telepathy"]\n'))
    with pytest.raises(CampaignFileError, match="pair_k"):
        parse_campaign_text(campaign_toml(extra='\n[evaluation]\npair_k = 0\n'))
