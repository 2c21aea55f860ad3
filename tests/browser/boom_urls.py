"""A URLconf for tests only: the site's own, plus ``/boom/``, a page whose view raises (the
500 page as a visitor meets it).  Used through ``settings.ROOT_URLCONF``; never installed."""

from django.contrib.auth.decorators import login_not_required
from django.urls import path

from config.urls import handler500
from config.urls import urlpatterns as site_urlpatterns

__all__ = ["handler500", "urlpatterns"]


@login_not_required
def boom(request):
    raise RuntimeError("a bug, on purpose (tests/browser/boom_urls.py)")


urlpatterns = [path("boom/", boom), *site_urlpatterns]
