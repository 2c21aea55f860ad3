from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project's own system checks (no models)."""

    name = "config"
    label = "project"
    verbose_name = "Project"

    def ready(self):
        from . import checks  # noqa: F401  (registers them)
