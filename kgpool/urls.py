from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from pooling import views as pooling_views


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers ask for /favicon.ico on pages that name no icon (the admin, the API docs)."""
    return HttpResponsePermanentRedirect(static("kgpool/favicon.svg"))


urlpatterns = [
    path("", pooling_views.home, name="home"),
    path("favicon.ico", favicon),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("evaluation/", include("evaluation.urls")),
    path("api/v1/", include("kgpool.api_urls")),
    path("", include("annotation.urls")),
]
