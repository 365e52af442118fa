from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.run_list, name="runs"),
    path("new/", views.new_run, name="new"),
    path("<int:run_id>/", views.report, name="report"),
    path("<int:run_id>/rerun/", views.rerun, name="rerun"),
    path("<int:run_id>/progress.json", views.progress, name="progress"),
    path("<int:run_id>/files/<str:name>", views.download, name="download"),
]
