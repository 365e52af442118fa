"""The versioned API, /api/v1/: one router over the apps' API views, with its OpenAPI schema and docs.

The judging endpoints (hand-outs: next item, judgment, skip, adjudication) are the ones of ``annotation.api``,
mounted here too (same views, same checks) so that a client needs one base URL; the original /api/ paths stay.
Their URL names keep their own namespace (``judging``): the permissions matrix checks them with the rows of
``annotation:<name>``.
"""
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.api import campaigns
from annotation.api import urls as judging_urls
from evaluation.api import views as evaluation
from pooling.api import views as pooling

app_name = "api_v1"

# hand-out endpoints only: the list and the progress of a campaign are v1's own (a superset of both)
JUDGING = [p for p in judging_urls.urlpatterns if p.name not in ("api_schema", "api_docs", "api_campaigns",
                                                                  "api_progress")]

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api_v1:schema"), name="docs"),
    path("kgs/", pooling.KGList.as_view(), name="kgs"),
    path("kgs/<slug:kg>/", pooling.KGDetail.as_view(), name="kg"),
    path("kgs/<slug:kg>/systems/", pooling.SystemList.as_view(), name="systems"),
    path("kgs/<slug:kg>/systems/import/", pooling.SystemUpload.as_view(), name="system_import"),
    path("kgs/<slug:kg>/systems/<slug:system>/", pooling.SystemDetail.as_view(), name="system"),
    path("kgs/<slug:kg>/samples/", pooling.SampleList.as_view(), name="samples"),
    path("kgs/<slug:kg>/samples/<slug:sample>/", pooling.SampleDetail.as_view(), name="sample"),
    path("uploads/<int:upload_id>/", pooling.UploadDetail.as_view(), name="upload"),
    path("pools/", pooling.PoolList.as_view(), name="pools"),
    path("pools/<int:pool_id>/", pooling.PoolDetail.as_view(), name="pool"),
    path("pools/<int:pool_id>/entries/", pooling.PoolEntries.as_view(), name="pool_entries"),
    path("campaigns/", campaigns.CampaignList.as_view(), name="campaigns"),
    path("campaigns/<slug:name>/", campaigns.CampaignDetail.as_view(), name="campaign"),
    path("campaigns/<slug:name>/members/", campaigns.Members.as_view(), name="members"),
    path("campaigns/<slug:name>/members/<str:username>/<slug:role>/", campaigns.Member.as_view(), name="member"),
    path("campaigns/<slug:name>/progress/", campaigns.Progress.as_view(), name="progress"),
    path("campaigns/<slug:name>/quality/", campaigns.Quality.as_view(), name="quality"),
    path("campaigns/<slug:name>/exports/<str:fmt>/", campaigns.Export.as_view(), name="export"),
    path("evaluations/", evaluation.RunList.as_view(), name="evaluations"),
    path("evaluations/<int:run_id>/", evaluation.RunDetail.as_view(), name="evaluation"),
    path("evaluations/<int:run_id>/results/", evaluation.RunResults.as_view(), name="evaluation_results"),
    path("evaluations/<int:run_id>/files/<str:name>", evaluation.RunFile.as_view(), name="evaluation_file"),
    path("", include((JUDGING, "judging"))),
]
