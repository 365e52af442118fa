"""Request and response shapes of the campaign API (/api/v1/campaigns/; OpenAPI schema)."""
from __future__ import annotations

from rest_framework import serializers

from annotation.lib.evidence import EVIDENCE_CHOICES
from annotation.lib.guidelines import MAX_GUIDELINES_CHARS
from annotation.lib.judging_order import ORDERS
from annotation.lib.rules import RULES
from annotation.models import Role
from annotation.services.exports import FORMATS

INT32 = 2**31 - 1
EXPORT_FORMATS = (*FORMATS, "bundle")


class CampaignRowOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    kg = serializers.CharField()
    pool = serializers.IntegerField(help_text="id of the judged pool")
    roles = serializers.ListField(child=serializers.CharField())
    manage = serializers.BooleanField(help_text="you may manage it (campaign admin or staff)")


class SettingsFields(serializers.Serializer):
    description = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    allowed_domains = serializers.ListField(child=serializers.CharField(max_length=255), max_length=200,
                                            required=False, help_text="verified source domains")
    assignment_timeout_s = serializers.IntegerField(min_value=1, max_value=INT32, required=False)
    gold_rate = serializers.FloatField(min_value=0, max_value=0.99, required=False)
    rushed_factor = serializers.FloatField(min_value=0, max_value=1e6, required=False)
    gold_threshold = serializers.FloatField(min_value=0, max_value=1, required=False)
    evidence_policy = serializers.ChoiceField(choices=EVIDENCE_CHOICES, required=False,
                                              help_text="for which answers a source URL is required")
    judging_order = serializers.ChoiceField(choices=ORDERS, required=False)
    item_budget = serializers.IntegerField(min_value=0, max_value=INT32, allow_null=True, required=False,
                                           help_text="stop handing out new pool items after this many (null: none)")
    guidelines = serializers.CharField(max_length=MAX_GUIDELINES_CHARS, allow_blank=True, required=False,
                                       trim_whitespace=False, help_text="campaign-wide judging guidelines (Markdown)")
    relation_guidelines = serializers.DictField(
        child=serializers.CharField(max_length=MAX_GUIDELINES_CHARS, allow_blank=True, trim_whitespace=False),
        required=False, help_text="relation key -> guidelines (Markdown); replaces them all")


class CampaignIn(SettingsFields):
    name = serializers.SlugField(max_length=100)
    pool = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="id of a finished pool")
    seed = serializers.IntegerField(min_value=0, max_value=INT32, default=0, help_text="shuffles the queue")
    reuse = serializers.BooleanField(default=True, help_text="take over labels earlier campaigns on the KG decided")
    filters = serializers.ListField(child=serializers.ChoiceField(choices=RULES), required=False, max_length=10,
                                    help_text="trivial rules to apply (label N what they rule out)")
    gold = serializers.BooleanField(default=False, help_text="add gold checks at gold_rate")


class CampaignSettingsOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    kg = serializers.CharField(source="pool.sample.kg.name")
    sample = serializers.CharField(source="pool.sample.name")
    pool = serializers.IntegerField(source="pool_id")
    allowed_domains = serializers.ListField(child=serializers.CharField())
    judgments_per_item = serializers.IntegerField()
    assignment_timeout_s = serializers.IntegerField()
    gold_rate = serializers.FloatField()
    rushed_factor = serializers.FloatField()
    gold_threshold = serializers.FloatField()
    evidence_policy = serializers.CharField()
    judging_order = serializers.CharField()
    item_budget = serializers.IntegerField(allow_null=True)
    guidelines = serializers.CharField()
    relation_guidelines = serializers.DictField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class MemberIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.values)


class MemberOut(serializers.Serializer):
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    judged = serializers.IntegerField()
    adjudicated = serializers.IntegerField()


class CampaignProgressOut(serializers.Serializer):
    items = serializers.IntegerField(help_text="items to label, gold checks apart")
    statuses = serializers.DictField(child=serializers.IntegerField(), help_text="items per status")
    gold = serializers.IntegerField()
    decided = serializers.IntegerField()
    percent = serializers.FloatField(help_text="share of items decided")
    left = serializers.IntegerField(help_text="items people still have to decide (under a spent budget: started)")
    judgments_last_hour = serializers.IntegerField()
    done = serializers.BooleanField(help_text="judging is done")


class IntervalOut(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)


class GoldOut(serializers.Serializer):
    username = serializers.CharField()
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    accuracy = IntervalOut()
    below_threshold = serializers.BooleanField()


class PaceOut(serializers.Serializer):
    username = serializers.CharField()
    judgments = serializers.IntegerField()
    median_ms = serializers.FloatField(allow_null=True)
    ratio = serializers.FloatField(allow_null=True)
    rushed = serializers.IntegerField()
    flagged = serializers.BooleanField()


class AgreementOut(serializers.Serializer):
    group = serializers.CharField()
    items = serializers.IntegerField()
    percent = IntervalOut()
    kappa = IntervalOut()
    ac1 = IntervalOut()
    alpha = IntervalOut()


class QualityOut(serializers.Serializer):
    gold_rate = serializers.FloatField()
    gold_items = serializers.IntegerField()
    gold = GoldOut(many=True)
    rushed_limit_ms = serializers.FloatField(allow_null=True)
    rushed = PaceOut(many=True)
    flags = serializers.DictField(child=serializers.IntegerField(), help_text="consistency flags by kind")
    reused = serializers.IntegerField()
    agreement = AgreementOut(many=True)
