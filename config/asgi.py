import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

from config.checks import refuse_to_serve_without_a_secret_key  # noqa: E402

refuse_to_serve_without_a_secret_key()
