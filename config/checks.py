"""System checks of the project's settings."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def secret_key_is_set(app_configs, **kwargs):
    if getattr(settings, "SECRET_KEY_MISSING", False):
        return [Error(settings.SECRET_KEY_MESSAGE, id="project.E001")]
    return []


def refuse_to_serve_without_a_secret_key() -> None:
    """Called by the WSGI/ASGI entry points: no server starts without a key in production."""
    from django.core.exceptions import ImproperlyConfigured

    if getattr(settings, "SECRET_KEY_MISSING", False):
        raise ImproperlyConfigured(settings.SECRET_KEY_MESSAGE)
