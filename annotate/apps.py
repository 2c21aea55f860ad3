from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from .language import session_language_on_login

        user_logged_in.connect(session_language_on_login, dispatch_uid="annotate-language")
