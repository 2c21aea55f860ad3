"""Reads of jobs: whose job one may see, one's recent jobs, and the estimate shown beside a
running job's bar."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from .models import Job, JobStatus


def jobs_visible(user: AbstractBaseUser) -> QuerySet[Job]:
    """The jobs ``user`` may see: the ones they started (a superuser sees all)."""
    jobs = Job.objects.select_related("user", "collection").defer("input")
    return jobs if user.is_superuser else jobs.filter(user=user)


def visible_job(user: AbstractBaseUser, job_id: int) -> Job:
    job = jobs_visible(user).filter(pk=job_id).first()
    if job is None:
        raise Http404(gettext("No such job."))
    return job


def recent_jobs(user: AbstractBaseUser, limit: int = 50) -> list[Job]:
    """The jobs ``user`` started, newest first (not the ones the app started on its own
    while they read a page: ``Job.listed``)."""
    jobs = jobs_visible(user).filter(listed=True)
    return list(jobs.order_by("-created_at", "-id")[:limit])


# what jobs count, as the apps name them (``ctx.progress(done, total, unit)``): marked here
# for translation, shown by ``unit_label`` in the page's language
UNITS = (
    gettext_noop("lines"),
    gettext_noop("questions"),
    gettext_noop("layers"),
    gettext_noop("run"),
    gettext_noop("runs"),
    gettext_noop("answers"),
    gettext_noop("steps"),
    gettext_noop("rows"),
    gettext_noop("rows read"),
    gettext_noop("rows written"),
    gettext_noop("members read"),
    gettext_noop("run answers checked"),
    gettext_noop("answer texts keyed"),
    gettext_noop("runs read"),
    gettext_noop("bootstrap samples"),
    gettext_noop("gain profiles"),
)


def unit_label(unit: str) -> str:
    """A job's count unit in the page's language (as it is when no translation has it)."""
    return gettext(unit) if unit else ""


def job_estimate(job: Job) -> timedelta | None:
    """Time left at the current phase's pace (None when it cannot be told yet)."""
    if job.status != JobStatus.RUNNING or not job.total or not job.done or not job.phase_started_at:
        return None
    elapsed = (timezone.now() - job.phase_started_at).total_seconds()
    if elapsed <= 0:
        return None
    left = elapsed * (job.total - job.done) / job.done
    return timedelta(seconds=round(max(0.0, left)))
