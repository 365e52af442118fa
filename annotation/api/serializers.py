"""Request and response shapes of the judging API (also the OpenAPI schema at /api/schema/)."""
from __future__ import annotations

import copy

from rest_framework import serializers


class ShallowFieldsMixin:
    """Each instance gets shallow copies of the declared fields: DRF deep-copies them, which re-runs every field's
    ``__init__`` (a quarter of a submit's validation time). Only for serializers of plain scalar fields that no
    code changes per instance; the copies share their validator lists, which validation only reads."""

    def get_fields(self) -> dict:
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}


class JudgmentIn(ShallowFieldsMixin, serializers.Serializer):
    answer = serializers.CharField(max_length=12, help_text="Y, N or C: can't tell (yes / no / cant_tell accepted); "
                                                            "with C a comment is required (the adjudicator reads it)")
    source_url = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default="",
        help_text="On one of the campaign's verified domains; required for the answers the campaign's "
                  "evidence_policy names (yes: for Y, no: for N, both, never)")
    quote = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="",
                                  help_text="The supporting quote; with C, the comment (or send it as comment)")
    comment = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="",
                                    help_text="With C: why you can't tell; stored as the judgment's quote")
    time_on_task_ms = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=86_400_000,
        help_text="Your own measure of the time on task (ms): kept as a hint, never above the server's measure "
                  "from the hand-out to this request",
    )
    request_id = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default="",
        help_text="Idempotency key: repeat a request with the same id and one judgment is recorded "
                  "(the next-item answer gives one per hand-out)",
    )
    next = serializers.BooleanField(
        required=False, default=False,
        help_text="Also hand me my next item: the answer then carries it as `next` (what next-item would answer), "
                  "one round trip per item instead of two",
    )


class AdjudicationIn(serializers.Serializer):
    label = serializers.CharField(max_length=5, help_text="Y or N: the final label")
    reason = serializers.CharField(max_length=5000)


class EntityOut(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    types = serializers.ListField(child=serializers.CharField())
    url = serializers.CharField()
    wikidata_url = serializers.CharField()


class RelationOut(serializers.Serializer):
    key = serializers.CharField()
    text = serializers.CharField()


class OriginOut(serializers.Serializer):
    head = serializers.CharField()
    relation = serializers.CharField()
    tail = serializers.CharField()
    qid = serializers.CharField()
    question = serializers.CharField()


class ItemOut(serializers.Serializer):
    question = serializers.CharField()
    head = EntityOut()
    relation = RelationOut()
    tail = EntityOut()
    origins = OriginOut(many=True)


class HandoutOut(serializers.Serializer):
    hand_out = serializers.IntegerField(allow_null=True, help_text="Id of the hand-out: address the work by it")
    item = ItemOut(allow_null=True)
    request_id = serializers.CharField(allow_blank=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    allowed_domains = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField(required=False)


class AnswerOut(serializers.Serializer):
    annotator = serializers.CharField(help_text="A or B")
    answer = serializers.CharField(help_text="Y, N or C (can't tell: quote holds the annotator's comment)")
    source_url = serializers.CharField()
    source_domain = serializers.CharField()
    quote = serializers.CharField()


class AdjudicationHandoutOut(serializers.Serializer):
    hand_out = serializers.IntegerField(allow_null=True, help_text="Id of the hand-out: address the decision by it")
    item = ItemOut(allow_null=True)
    answers = AnswerOut(many=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    detail = serializers.CharField(required=False)


class JudgmentOut(serializers.Serializer):
    id = serializers.IntegerField()
    hand_out = serializers.IntegerField(allow_null=True)
    answer = serializers.CharField(help_text="Y, N or C (can't tell)")
    source_url = serializers.CharField()
    source_domain = serializers.CharField()
    quote = serializers.CharField()
    time_on_task_ms = serializers.IntegerField(allow_null=True, help_text="Measured on the server: hand-out to answer")
    client_time_ms = serializers.IntegerField(allow_null=True, help_text="The client's figure, at most the server's")
    request_id = serializers.CharField()
    given_at = serializers.DateTimeField()
    next = HandoutOut(required=False, help_text="Only when the request asked for it (`next`): my next hand-out, as "
                                                "next-item answers (item null when nothing is left)")


class AdjudicationOut(serializers.Serializer):
    hand_out = serializers.IntegerField()
    label = serializers.CharField()
    reason = serializers.CharField()
    decided_at = serializers.DateTimeField()


class ProgressOut(serializers.Serializer):
    judged = serializers.IntegerField()
    skipped = serializers.IntegerField()
    adjudicated = serializers.IntegerField()
    last_hour = serializers.IntegerField()
    per_hour = serializers.FloatField()
    campaign_total = serializers.IntegerField(help_text="Items to label, gold checks apart")
    campaign_percent = serializers.FloatField(
        help_text="exact: share of items decided; otherwise the share of the judging done, whole percent, counted "
                  "up to campaign_as_of (it never moves with one answer: annotators learn nothing of others' answers)")
    exact = serializers.BooleanField(help_text="Exact, live campaign figures (staff and campaign admins only)")
    campaign_decided = serializers.IntegerField(allow_null=True, help_text="exact only")
    campaign_last_hour = serializers.IntegerField(allow_null=True, help_text="exact only")
    campaign_as_of = serializers.DateTimeField(allow_null=True, help_text="not exact: the hour the figure stands at")
    campaign_automatic = serializers.IntegerField(
        allow_null=True, help_text="exact only: items labelled without people (rules, imports, reuse)")
    campaign_people_percent = serializers.FloatField(
        allow_null=True, help_text="exact only: share of the items left to people that people decided")


class CampaignOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    kg = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    manage = serializers.BooleanField()
    allowed_domains = serializers.ListField(child=serializers.CharField())


class ErrorOut(serializers.Serializer):
    detail = serializers.CharField()
