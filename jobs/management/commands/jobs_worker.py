"""``manage.py jobs_worker``: the worker of the configured queue (JOBS_QUEUE), one command
whatever the queue: the database queue's ``db_worker`` or RQ's ``rqworker`` with the task
framework's job class.  Run as many as there are cores to spare, on as many machines as
reach the database (and Redis)."""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db.backends.signals import connection_created

from jobs.services import jobs_reap


def job_timeouts(sender, connection, **kwargs) -> None:
    """A worker's PostgreSQL connections wait longer than the web's: a job's statement may
    run for JOBS_DB_STATEMENT_TIMEOUT_MS (an hour), a lock be waited for
    JOBS_DB_LOCK_TIMEOUT_MS (a minute); the web's 20 s and 5 s would cut a large import."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('statement_timeout', %s, false), "
            "set_config('lock_timeout', %s, false)",
            [str(settings.JOBS_DB_STATEMENT_TIMEOUT_MS), str(settings.JOBS_DB_LOCK_TIMEOUT_MS)],
        )


class Command(BaseCommand):
    help = (
        "Run background jobs (uploads, imports, pooling, archives, reports) from the "
        "configured queue (JOBS_QUEUE: database or redis)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch",
            action="store_true",
            help="run the jobs waiting now, then exit (database queue: db_worker --batch; "
            "Redis queue: rqworker --burst)",
        )
        parser.add_argument(
            "--max-jobs", type=int, default=None, help="exit after running this many jobs"
        )

    def handle(self, *args, batch: bool, max_jobs: int | None, verbosity: int, **options):
        connection_created.connect(job_timeouts)
        failed = jobs_reap()
        if failed and verbosity:
            self.stderr.write(f"{failed} job(s) whose worker had stopped marked failed.")
        queue, name = settings.JOBS_QUEUE, settings.JOBS_QUEUE_NAME
        if queue == "database":
            argv = ["--queue-name", name, "--no-reload", "--no-startup-delay"]
            if batch:
                argv.append("--batch")
            if max_jobs is not None:
                argv += ["--max-tasks", str(max_jobs)]
            call_command("db_worker", *argv, verbosity=verbosity)
        elif queue == "redis":
            argv = [name, "--job-class", "django_tasks_rq.Job"]
            if batch:
                argv.append("--burst")
            if max_jobs is not None:
                argv += ["--max-jobs", str(max_jobs)]
            call_command("rqworker", *argv, verbosity=verbosity)
        else:
            raise CommandError(
                f"JOBS_QUEUE={queue!r} runs each job inside the request that starts it: "
                "there is no worker to run (set JOBS_QUEUE=database or redis)."
            )
