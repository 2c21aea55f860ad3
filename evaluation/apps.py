from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        # the scoring engine's file errors in the reader's language (the engine knows no
        # Django; the command-line tools, which never install this, print English)
        from django.utils.translation import gettext

        from .metrics.errors import set_translator

        set_translator(gettext)
