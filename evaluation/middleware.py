"""The evaluation app's middleware: a score page whose scores a job computes answers its
progress (``score_job_views.scores_pending_response``) wherever in the page the scores
were asked for, so that no view needs to know."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .score_job_views import scores_pending_response
from .score_store import ScoresPending


class ScoresPendingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, ScoresPending):
            response = scores_pending_response(request, exception)
            return response.render()
        return None
