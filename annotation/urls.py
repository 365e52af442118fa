"""Judging pages under /campaigns/ and the JSON API under /api/ (see annotation.api)."""
from django.urls import include, path

from annotation.views import judging, manage

app_name = "annotation"

pages = [
    path("", judging.campaign_list, name="campaigns"),
    path("<slug:name>/", judging.campaign_home, name="campaign"),
    path("<slug:name>/judge/", judging.judge_next, name="judge_next"),
    path("<slug:name>/judge/<int:item_id>/", judging.judge_item, name="judge_item"),
    path("<slug:name>/judge/<int:item_id>/skip/", judging.judge_skip, name="judge_skip"),
    path("<slug:name>/adjudicate/", judging.adjudicate_next, name="adjudicate_next"),
    path("<slug:name>/adjudicate/<int:item_id>/", judging.adjudicate_item, name="adjudicate_item"),
    path("<slug:name>/manage/", manage.dashboard, name="manage"),
    path("<slug:name>/manage/members/", manage.members, name="manage_members"),
    path("<slug:name>/manage/sources/", manage.domains, name="manage_domains"),
    path("<slug:name>/manage/filter/", manage.filtering, name="manage_filter"),
    path("<slug:name>/manage/filter/apply/", manage.filtering_apply, name="manage_filter_apply"),
    path("<slug:name>/manage/filter/revert/", manage.filtering_revert, name="manage_filter_revert"),
    path("<slug:name>/manage/templates/", manage.templates, name="manage_templates"),
    path("<slug:name>/manage/templates/preview/", manage.template_preview_json, name="manage_template_preview"),
    path("<slug:name>/manage/agreement/", manage.agreement_page, name="manage_agreement"),
    path("<slug:name>/manage/export/<str:fmt>/", manage.export, name="manage_export"),
]

urlpatterns = [
    path("campaigns/", include(pages)),
    path("api/", include("annotation.api.urls")),
]
