"""The test suite's settings (pytest-django): the development settings.  Production
settings are checked in subprocesses (tests/test_settings.py, tests/faults)."""

import os

os.environ.setdefault("DJANGO_DEBUG", "1")
# a job runs inside the request or command that starts it; the worker tests (tests/jobs)
# switch to the database or Redis queue with real worker processes
os.environ.setdefault("JOBS_QUEUE", "immediate")

from config.settings import *  # noqa: F403
