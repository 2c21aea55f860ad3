"""Reads of the API that no page helper outside the views gives: each in a fixed number of
queries."""

from __future__ import annotations

from django.db.models import Count

from annotate.models import Collection, Question
from evaluation.models import Run


def answers_per_question(run: Run) -> dict[str, int]:
    """Question id -> number of answers of ``run`` (L of the score tables)."""
    return dict(
        run.answers.values("question__qid")
        .annotate(n=Count("id"))
        .values_list("question__qid", "n")
    )


def synsets_per_question(collection: Collection) -> dict[str, int]:
    """Question id -> number of synsets (R of the score tables)."""
    return dict(
        Question.objects.filter(collection=collection).with_counts().values_list("qid", "n_synsets")
    )
