from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotate import views as annotate_views
from config.auth import RateLimitedLoginView

handler500 = "config.errors.server_error"

urlpatterns = [
    path("", annotate_views.home, name="home"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("account/", include("api.account_urls")),
    path("", include("annotate.urls")),
    path("", include("evaluation.urls")),
]
