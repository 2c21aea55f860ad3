from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project's own system checks (no models); the upload spool directory exists
    before anything (a check, a worker) looks at it."""

    name = "config"
    label = "project"
    verbose_name = "Project"

    def ready(self):
        from pathlib import Path

        from django.conf import settings

        from . import checks  # noqa: F401  (registers them)

        try:
            Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # Django's own check (files.E001) then names the directory
