"""What the site's navigation shows: only the entries the user's roles can use."""

from __future__ import annotations

from django.http import HttpRequest

from .permissions import navigation_for


def navigation(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    # lazy: pages that never render the navigation (partials, downloads) pay no query
    return {"nav": _LazyNavigation(user)}


class _LazyNavigation:
    def __init__(self, user) -> None:
        self._user = user
        self._flags: dict[str, bool] | None = None

    def __getattr__(self, name: str) -> bool:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._flags is None:
            self._flags = navigation_for(self._user)
        try:
            return self._flags[name]
        except KeyError:
            raise AttributeError(name) from None
