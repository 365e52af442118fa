from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.api import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # the split view serves Swagger UI's init script as its own request: no inline script (Content-Security-Policy)
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="annotation:api_schema"), name="api_docs"),
    path("campaigns/", views.CampaignList.as_view(), name="api_campaigns"),
    path("campaigns/<slug:name>/progress/", views.ProgressView.as_view(), name="api_progress"),
    path("campaigns/<slug:name>/next-item/", views.NextItem.as_view(), name="api_next_item"),
    # Work is addressed by its hand-out (Assignment) id, never by the item's pk (see annotation/urls.py).
    path("campaigns/<slug:name>/hand-outs/<int:hand_out>/", views.ItemDetail.as_view(), name="api_item"),
    path("campaigns/<slug:name>/hand-outs/<int:hand_out>/judgment/", views.SubmitJudgment.as_view(), name="api_judgment"),
    path("campaigns/<slug:name>/hand-outs/<int:hand_out>/skip/", views.Skip.as_view(), name="api_skip"),
    path("campaigns/<slug:name>/hand-outs/<int:hand_out>/undo/", views.Undo.as_view(), name="api_undo"),
    path("campaigns/<slug:name>/next-adjudication/", views.NextAdjudication.as_view(), name="api_next_adjudication"),
    path("campaigns/<slug:name>/hand-outs/<int:hand_out>/adjudication/", views.Adjudicate.as_view(),
         name="api_adjudicate"),
]
