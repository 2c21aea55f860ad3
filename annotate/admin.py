"""The admin: accounts, memberships and collections' settings; the judgments are shown, not
edited.  A judgment changed here would skip what every judging write does (the question's
lock and version, the spelling keys, the audit trail, the collection's judgment version that
stored scores are keyed by), so strings, synsets and levels are read-only here, and the
matching mode is changed on the collection's Matching mode page (which re-keys every
string); a question added or deleted here bumps the judgment version as an import does."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .edits import collection_judgments_changed
from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Membership,
    Question,
)


class ReadOnly:
    """An admin that shows its rows and changes none (see the module's docstring)."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class LevelInline(ReadOnly, admin.TabularInline):
    model = Level
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "matching_mode",
        "max_output_size",
        "open_for_submissions",
        "leaderboard_published",
        "judgments_changed_at",
    ]
    list_filter = ["matching_mode", "open_for_submissions", "leaderboard_published"]
    search_fields = ["name", "slug", "description"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [LevelInline, MembershipInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Collection | None = None) -> list:
        # a new mode re-keys every string: the collection's Matching mode page does it
        return ["matching_mode"] if obj is not None else []


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "collection", "role"]
    list_filter = ["role", "collection"]
    search_fields = ["user__username", "collection__name"]
    autocomplete_fields = ["user"]


@admin.register(Level)
class LevelAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["code", "label", "gain", "order", "collection"]
    list_filter = ["collection"]
    search_fields = ["code", "label"]


class SynsetInline(ReadOnly, admin.TabularInline):
    model = AnswerSynset
    extra = 0


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["qid", "text", "collection", "status", "version", "updated_at"]
    list_filter = ["status", "collection"]
    search_fields = ["qid", "text"]
    filter_horizontal = ["assessors"]
    inlines = [SynsetInline]
    readonly_fields = ["status", "version"]

    def save_model(self, request: HttpRequest, obj: Question, form: object, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:  # one more question to score
            collection_judgments_changed(collection_id=obj.collection_id)

    def delete_model(self, request: HttpRequest, obj: Question) -> None:
        super().delete_model(request, obj)
        collection_judgments_changed(collection_id=obj.collection_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        collections = set(queryset.values_list("collection_id", flat=True))
        super().delete_queryset(request, queryset)
        for collection_id in collections:
            collection_judgments_changed(collection_id=collection_id)


@admin.register(AnswerSynset)
class AnswerSynsetAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["question", "ordinal", "note"]
    list_filter = ["question__collection"]
    search_fields = ["question__qid", "strings__text"]
    list_select_related = ["question"]


@admin.register(AnswerString)
class AnswerStringAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["text", "question", "synset", "level", "source", "judged_by", "judged_at"]
    list_filter = ["source", "level__code", "question__collection"]
    search_fields = ["text", "key", "question__qid"]
    list_select_related = ["question", "synset", "level", "judged_by"]
    raw_id_fields = ["question", "synset"]


@admin.register(JudgmentEvent)
class JudgmentEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "collection", "question", "user", "action"]
    list_filter = ["action", "collection"]
    search_fields = ["question__qid", "user__username", "action"]
    list_select_related = ["collection", "question", "user"]

    def has_change_permission(self, request, obj=None):
        return False  # the audit trail is append-only

    def has_delete_permission(self, request, obj=None):
        return False
