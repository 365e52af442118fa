"""Judging pages under /campaigns/ and the JSON API under /api/ (see annotation.api)."""
from django.urls import include, path

from annotation.views import audit, guidelines, judging, manage, quality, undo

app_name = "annotation"

pages = [
    path("", judging.campaign_list, name="campaigns"),
    path("<slug:name>/", judging.campaign_home, name="campaign"),
    path("<slug:name>/guidelines/", guidelines.read, name="guidelines"),
    path("<slug:name>/judge/", judging.judge_next, name="judge_next"),
    # Work is addressed by its hand-out (Assignment) id, never by the item's pk: gold checks are created after
    # the pool's items, so item pks would tell them apart; hand-outs are created interleaved as work is served.
    path("<slug:name>/judge/<int:hand_out>/", judging.judge_item, name="judge_item"),
    path("<slug:name>/judge/<int:hand_out>/skip/", judging.judge_skip, name="judge_skip"),
    path("<slug:name>/judge/<int:hand_out>/next/", judging.judge_prepare_next, name="judge_prepare_next"),
    path("<slug:name>/recent/", undo.recent, name="recent_answers"),
    path("<slug:name>/undo/", undo.undo, name="undo"),
    path("<slug:name>/adjudicate/", judging.adjudicate_next, name="adjudicate_next"),
    path("<slug:name>/adjudicate/<int:hand_out>/", judging.adjudicate_item, name="adjudicate_item"),
    path("<slug:name>/audit/", audit.audit_next, name="audit_next"),
    path("<slug:name>/audit/<int:position>/", audit.audit_item, name="audit_item"),
    path("<slug:name>/manage/", manage.dashboard, name="manage"),
    path("<slug:name>/manage/members/", manage.members, name="manage_members"),
    path("<slug:name>/manage/sources/", manage.domains, name="manage_domains"),
    path("<slug:name>/manage/order/", manage.judging_order, name="manage_order"),
    path("<slug:name>/manage/order/simulation/", manage.simulation, name="manage_simulation"),
    path("<slug:name>/manage/filter/", manage.filtering, name="manage_filter"),
    path("<slug:name>/manage/filter/apply/", manage.filtering_apply, name="manage_filter_apply"),
    path("<slug:name>/manage/filter/revert/", manage.filtering_revert, name="manage_filter_revert"),
    path("<slug:name>/manage/guidelines/", guidelines.manage, name="manage_guidelines"),
    path("<slug:name>/manage/templates/", manage.templates, name="manage_templates"),
    path("<slug:name>/manage/templates/preview/", manage.template_preview_json, name="manage_template_preview"),
    path("<slug:name>/manage/agreement/", manage.agreement_page, name="manage_agreement"),
    path("<slug:name>/manage/quality/", quality.quality_page, name="manage_quality"),
    path("<slug:name>/manage/quality/gold/", quality.add_gold, name="manage_quality_gold"),
    path("<slug:name>/manage/quality/recheck/", quality.recheck, name="manage_quality_recheck"),
    path("<slug:name>/manage/audit/", audit.audit_admin, name="manage_audit"),
    path("<slug:name>/manage/audit/draw/", audit.audit_draw, name="manage_audit_draw"),
    path("<slug:name>/manage/audit/apply/", audit.audit_apply, name="manage_audit_apply"),
    path("<slug:name>/manage/export/<str:fmt>/", manage.export, name="manage_export"),
]

urlpatterns = [
    path("campaigns/", include(pages)),
    path("api/", include("annotation.api.urls")),
]
