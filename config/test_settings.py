"""The test suite's settings (pytest-django): the development settings.  Production
settings are checked in subprocesses (tests/test_settings.py, tests/faults)."""

import os

os.environ.setdefault("DJANGO_DEBUG", "1")

from config.settings import *  # noqa: F403
