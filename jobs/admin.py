"""The jobs in the admin, read-only (staff may delete old ones).  The task framework's own
result rows are the queue's bookkeeping: their admin (django_tasks_db's) is replaced by
this one, which shows what people see."""

from __future__ import annotations

from django.contrib import admin
from django_tasks_db.models import DBTaskResult

from .models import Job

if admin.site.is_registered(DBTaskResult):
    admin.site.unregister(DBTaskResult)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("label", "kind", "user", "collection", "status", "created_at", "finished_at")
    list_filter = ("status", "kind")
    search_fields = ("label", "user__username")
    exclude = ("input",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
