"""The language of the pages: each person's choice (``UserPreference.language``), kept in
their session from the moment they log in, so no page pays a query for it; without a
choice, Django's ``LocaleMiddleware`` follows the language cookie, then the browser's
``Accept-Language``.  The menu's switcher posts to ``language_set``."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.decorators import login_not_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from .models import UserPreference

SESSION_KEY = "language"


def languages() -> dict[str, str]:
    """The languages the pages are translated into, code -> the language's own name."""
    return dict(settings.LANGUAGES)


def user_language(user: AbstractBaseUser) -> str:
    """``user``'s chosen language ("" when they chose none)."""
    found = UserPreference.objects.filter(user=user).values_list("language", flat=True).first()
    return found if found in languages() else ""


@transaction.atomic
def preference_language_set(*, user: AbstractBaseUser, language: str) -> None:
    """Keep ``language`` (one of ``settings.LANGUAGES``, or "" for the browser's) as
    ``user``'s choice."""
    if language and language not in languages():
        raise ValueError(f"no such language: {language!r}")
    UserPreference.objects.update_or_create(user=user, defaults={"language": language})


def session_language_on_login(
    sender: object, request: HttpRequest | None, user: AbstractBaseUser, **kwargs: object
) -> None:
    """``user_logged_in``: their chosen language into the session (``annotate.apps``)."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_KEY] = user_language(user)


class UserLanguageMiddleware:
    """After ``LocaleMiddleware`` and the authentication: the language the person chose,
    from their session, over the browser's."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        chosen = session.get(SESSION_KEY, "") if session is not None else ""
        if chosen and chosen in languages():
            translation.activate(chosen)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)


@login_not_required
@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """The menu's switcher: the pages in ``language`` from now on (kept as the person's
    choice, in their session and in the language cookie: the log-in page follows it
    too), back to ``next``."""
    language = request.POST.get("language", "")
    if language not in languages():
        language = ""
    if request.user.is_authenticated:
        preference_language_set(user=request.user, language=language)
    request.session[SESSION_KEY] = language
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    response = HttpResponseRedirect(target)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=365 * 24 * 3600,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        )
        translation.activate(language)
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    return response
