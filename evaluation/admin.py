from django.contrib import admin

from .models import Run, RunAnswer


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "owner", "format", "uploaded_at", "source_name"]
    list_filter = ["format", "collection"]
    search_fields = ["name", "description", "owner__username", "sha256"]
    list_select_related = ["collection", "owner"]


@admin.register(RunAnswer)
class RunAnswerAdmin(admin.ModelAdmin):
    list_display = ["run", "question", "rank", "text", "score"]
    list_filter = ["run__collection"]
    search_fields = ["text", "question__qid", "run__name"]
    list_select_related = ["run", "question"]
    raw_id_fields = ["run", "question"]
