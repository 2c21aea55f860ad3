from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from annotate.signals import matching_mode_changed

        from .services import run_answers_rekey

        # a collection's new matching mode re-keys its run answers, in the same transaction
        matching_mode_changed.connect(
            lambda sender, **kw: run_answers_rekey(collection=kw["collection"], mode=kw["mode"]),
            weak=False,
            dispatch_uid="evaluation-run-answers-rekey",
        )
