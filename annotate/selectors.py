"""Reads for the annotation pages: each returns what one page needs in a fixed number of
queries."""

from __future__ import annotations

from django.db.models import Count, Q

from .models import AnswerString, AnswerSynset, Collection, Question


def collection_overview(collection: Collection) -> dict:
    """Counts shown on a collection's overview page."""
    q = Question.objects.filter(collection=collection).aggregate(
        questions=Count("id"),
        done=Count("id", filter=Q(status="done")),
        in_progress=Count("id", filter=Q(status="in_progress")),
    )
    s = AnswerString.objects.filter(question__collection=collection).aggregate(
        strings=Count("id"),
        correct=Count("id", filter=Q(synset__isnull=False)),
        incorrect=Count("id", filter=Q(synset__isnull=True, judged_at__isnull=False)),
        unjudged=Count("id", filter=Q(judged_at__isnull=True)),
    )
    synsets = AnswerSynset.objects.filter(question__collection=collection).count()
    runs = collection.runs.count()
    judged = s["correct"] + s["incorrect"]
    total = q["questions"] or 0
    return {
        **q, **s, "synsets": synsets, "runs": runs, "judged": judged,
        "percent_done": round(100 * q["done"] / total) if total else 0,
    }
