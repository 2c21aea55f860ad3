"""Fault tests need PostgreSQL (a real server to kill clients of, cut off and lock)."""

import pytest
from django.db import connection


@pytest.fixture(autouse=True)
def _postgres_only(request):
    if connection.vendor != "postgresql":
        pytest.skip(
            "fault tests need PostgreSQL: set DATABASE_URL=postgres://... "
            f"(this run uses {connection.vendor})"
        )
