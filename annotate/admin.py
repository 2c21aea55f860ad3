from django.contrib import admin

from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Membership,
    Question,
)


class LevelInline(admin.TabularInline):
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


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "collection", "role"]
    list_filter = ["role", "collection"]
    search_fields = ["user__username", "collection__name"]
    autocomplete_fields = ["user"]


@admin.register(Level)
class LevelAdmin(admin.ModelAdmin):
    list_display = ["code", "label", "gain", "order", "collection"]
    list_filter = ["collection"]
    search_fields = ["code", "label"]


class SynsetInline(admin.TabularInline):
    model = AnswerSynset
    extra = 0


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["qid", "text", "collection", "status", "version", "updated_at"]
    list_filter = ["status", "collection"]
    search_fields = ["qid", "text"]
    filter_horizontal = ["assessors"]
    inlines = [SynsetInline]


@admin.register(AnswerSynset)
class AnswerSynsetAdmin(admin.ModelAdmin):
    list_display = ["question", "ordinal", "note"]
    list_filter = ["question__collection"]
    search_fields = ["question__qid", "strings__text"]
    list_select_related = ["question"]


@admin.register(AnswerString)
class AnswerStringAdmin(admin.ModelAdmin):
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
