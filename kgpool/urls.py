from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from pooling import views as pooling_views

urlpatterns = [
    path("", pooling_views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("evaluation/", include("evaluation.urls")),
    path("api/v1/", include("kgpool.api_urls")),
    path("", include("annotation.urls")),
]
