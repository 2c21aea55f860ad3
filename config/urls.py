from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path, reverse_lazy
from django.views.decorators.http import require_GET
from django.views.i18n import JavaScriptCatalog

from config import help_pages
from config.auth import RateLimitedLoginView
from config.htmx import HtmxHttpRequest, redirect_to

handler500 = "config.errors.server_error"


@require_GET
def home(request: HtmxHttpRequest) -> HttpResponse:
    """The site's root: the user's collections."""
    return redirect_to(request, "annotate:collection-list")


@login_not_required
@require_GET
def favicon(request):
    """Browsers ask for /favicon.ico where a page names no icon (the admin, error pages)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("", home, name="home"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # the one-time link of an account an organizer created (annotate.organizing.member_invite)
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="registration/set_password.html",
            success_url=reverse_lazy("set-password-done"),
        ),
        name="set-password",
    ),
    path(
        "accounts/set-password/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/set_password_done.html"
        ),
        name="set-password-done",
    ),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
    # the scripts' translations (gettext() in static/js), the log-in page's too
    path(
        "jsi18n/",
        login_not_required(JavaScriptCatalog.as_view()),
        name="javascript-catalog",
    ),
    path("help/glossary/", help_pages.glossary, name="glossary"),
    path("jobs/", include("jobs.urls")),
    path("api/", include("api.urls")),
    path("account/", include("api.account_urls")),
    path("", include("annotate.urls")),
    path("", include("evaluation.urls")),
]
