"""The admin: runs' names, descriptions and owners may change here; their answers are shown,
not edited (stored scores are keyed by the run's file, ``Run.sha256``: an answer changed
here would leave them stale), and a run is uploaded on its page, never added here."""

from django.contrib import admin
from django.http import HttpRequest

from .models import Run, RunAnswer


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "owner", "format", "uploaded_at", "source_name"]
    list_filter = ["format", "collection"]
    search_fields = ["name", "description", "owner__username", "sha256"]
    list_select_related = ["collection", "owner"]
    readonly_fields = ["collection", "format", "sha256", "source_name"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(RunAnswer)
class RunAnswerAdmin(admin.ModelAdmin):
    list_display = ["run", "question", "rank", "text", "score"]
    list_filter = ["run__collection"]
    search_fields = ["text", "question__qid", "run__name"]
    list_select_related = ["run", "question"]
    raw_id_fields = ["run", "question"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
