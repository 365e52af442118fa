"""The filter preview measures each rule against the labelled triples at hand: the final labels of the KG's
campaigns (rule labels left out) or a judgments file; in the selector, the command's --dry-run and the page."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation.models import Item
from annotation.selectors.filtering import filter_preview
from annotation.selectors.reference_labels import campaign_reference_labels
from annotation.services.campaigns import create_campaign
from tests._annotation_web_support import member
from tests._filter_support import BOTH, CARDINALITY_ONLY, KEPT, TYPE_ONLY, typed_pool

pytestmark = pytest.mark.django_db


def label(campaign, triple, value, origin="unanimous", status="agreed", rule=""):
    h, r, t = triple
    Item.objects.filter(campaign=campaign, head__key=h, relation__key=r, tail__key=t).update(
        status=status, label=value, label_origin=origin, rule=rule)


@pytest.fixture
def labelled(tmp_path):
    """A pool and an earlier campaign on it where people said: BOTH is N, TYPE_ONLY is Y (the type rule would be
    wrong there), KEPT is Y; CARDINALITY_ONLY is N only by a rule (no evidence)."""
    pool = typed_pool(tmp_path)
    earlier = create_campaign("earlier", pool)
    label(earlier, BOTH, "N")
    label(earlier, TYPE_ONLY, "Y", origin="adjudicated", status="adjudicated")
    label(earlier, KEPT, "Y")
    label(earlier, CARDINALITY_ONLY, "N", origin="rule", status="auto_negative", rule="cardinality")
    return pool


def summary(report):
    return {rule: (p.rejected, p.labelled, p.negatives, len(p.positives)) for rule, p in report.precision.items()}


def test_precision_against_campaign_labels(labelled):
    reference = campaign_reference_labels(labelled.sample.kg)
    assert len(reference) == 3  # the rule label is left out
    report = filter_preview(labelled, reference=reference)
    # type rejects BOTH and TYPE_ONLY (1 N, 1 Y); cardinality rejects CARDINALITY_ONLY (unlabelled) and BOTH (N);
    # no entry is a self-loop (reflexive)
    assert summary(report) == {"type": (2, 2, 1, 1), "cardinality": (2, 1, 1, 0), "reflexive": (0, 0, 0, 0),
                               "any": (3, 2, 1, 1)}
    assert report.precision["type"].precision == 0.5 and report.precision["cardinality"].precision == 1.0


def test_campaigns_that_disagree_are_left_out(labelled):
    other = create_campaign("other", labelled)
    label(other, BOTH, "Y")
    reference = campaign_reference_labels(labelled.sample.kg)
    assert reference.conflicting == 1 and len(reference) == 2


def test_command_dry_run_with_a_judgments_file(labelled, tmp_path):
    path = tmp_path / "judgments.tsv"
    path.write_text("# h r t label\nes\tcapital\trome\tY\na\tlikes\tparis\tN\n", encoding="utf-8")
    out = io.StringIO()
    call_command("filter_pool", str(labelled.pk), "--dry-run", "--labels", str(path), stdout=out)
    text = out.getvalue()
    assert "precision against judgments.tsv (2 labelled triples)" in text
    assert "type\t2\t1\t1\t0\t1.0000" in text
    assert "cardinality\t2\t1\t0\t1\t0.0000" in text
    assert "labelled positives the rules would reject (1):\n  es\tcapital\trome\t[cardinality]" in text
    # without --labels: the campaigns' labels
    out = io.StringIO()
    call_command("filter_pool", str(labelled.pk), "--dry-run", stdout=out)
    assert "type\t2\t2\t1\t1\t0.5000" in out.getvalue()
    path.write_text("es\tcapital\trome\tmaybe\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"judgments.tsv:1: expected"):
        call_command("filter_pool", str(labelled.pk), "--dry-run", "--labels", str(path))
    path.write_text("es\tcapital\tatlantis\tN\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"judgments.tsv:1: unknown entity 'atlantis'"):
        call_command("filter_pool", str(labelled.pk), "--dry-run", "--labels", str(path))


def test_page_shows_precision_and_the_positives_a_rule_would_reject(labelled):
    campaign = create_campaign("now", labelled)
    client = Client()
    client.force_login(member(campaign, "boss", "admin"))
    page = client.get(reverse("annotation:manage_filter", args=[campaign.name]),
                      {"rules": ["type", "cardinality"], "threshold": "1.5"})
    assert page.status_code == 200
    rows = {row.rule: row for row in page.context["precision"]}
    assert (rows["type"].labelled, rows["type"].negatives, len(rows["type"].positives)) == (2, 1, 1)
    html = page.content.decode()
    assert 'id="precision"' in html and "0.5000" in html
    assert [(row["entry"].head.key, row["entry"].tail.key) for row in page.context["positives"]] == [("a", "paris")]
    # the type options travel with the preview and the apply form
    roles = client.get(reverse("annotation:manage_filter", args=[campaign.name]),
                       {"rules": ["type"], "threshold": "1.5", "type_source": "roles", "type_min_support": "1"})
    assert roles.status_code == 200 and "role types" in roles.context["report"].type_source
