"""A background job as people see it: what it does, for whom, on which collection, how far
it has come, and how it ended (with every error of its input, as the inline path shows
them).  The task framework's own result row is only the queue's bookkeeping."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class JobStatus(models.TextChoices):
    QUEUED = "queued", _("Waiting for a worker")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class Conflict(models.TextChoices):
    """How a job shares its collection with other jobs: an exclusive job (the matching-mode
    change) runs alone; shared jobs (uploads, imports, pooling, exports) run side by side
    but never beside an exclusive one; a job without a collection conflicts with none."""

    EXCLUSIVE = "exclusive", "alone on its collection"
    SHARED = "shared", "beside other shared jobs"
    NONE = "none", "beside any job"


class Job(models.Model):
    kind = models.CharField(max_length=40)
    label = models.CharField(max_length=300)
    # the job function, a dotted path (``jobs.runner.run_job`` imports and calls it)
    func = models.CharField(max_length=200)
    # False: a job the app started on its own while a page was read (a small report
    # computed at once, then kept), not one the person asked for: not in their list
    listed = models.BooleanField(default=True)
    # the language of the person who started it (their page's): the job's messages,
    # phases and errors are written in it
    language = models.CharField(max_length=10, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    collection = models.ForeignKey(
        "annotate.Collection", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    conflict = models.CharField(max_length=10, choices=Conflict, default=Conflict.SHARED)
    params = models.JSONField(default=dict, blank=True)
    # the uploaded file the job reads (cleared when the job ends)
    input = models.BinaryField(null=True, blank=True, editable=False)
    input_name = models.CharField(max_length=255, blank=True)

    status = models.CharField(max_length=10, choices=JobStatus, default=JobStatus.QUEUED)
    phase = models.CharField(max_length=100, blank=True)
    done = models.BigIntegerField(default=0)
    total = models.BigIntegerField(null=True, blank=True)
    unit = models.CharField(max_length=40, blank=True)
    cancel_requested = models.BooleanField(default=False)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    phase_started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # host:pid of the process running it (a dead pid on the same host fails it at once)
    worker = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=64, blank=True)

    message = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    # [{"file": ..., "line": ..., "message": ...}, ...]: the errors the inline path shows
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["collection", "status"], name="job_collection_status"),
            models.Index(fields=["user", "-created_at"], name="job_user_recent"),
            models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"{self.label} ({self.get_status_display()})"

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def percent(self) -> int | None:
        if not self.total:
            return 100 if self.status == JobStatus.SUCCEEDED else None
        return max(0, min(100, round(100 * self.done / self.total)))


class JobLock(models.Model):
    """One row per lock key (a collection): starting a job locks its row, so two jobs that
    would conflict cannot both pass the check at the same instant."""

    key = models.CharField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.key


class JobOutput(models.Model):
    """A file a job made (an archive, a large CSV): kept in the database, so any web server
    can hand it to the job's owner, wherever the worker that wrote it ran."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="outputs")
    name = models.CharField(max_length=255)
    content_type = models.CharField(max_length=100, default="application/octet-stream")
    size = models.BigIntegerField(default=0)
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name
