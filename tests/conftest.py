import os

import pytest

# Playwright's sync API runs an event loop in the test thread; Django's ORM refuses to run
# in such a thread unless told that this is deliberate (only tests do this).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(config, items):
    """The browser tests, the fault tests (a server in a subprocess) and the fuzz tests
    (thousands of generated files) are ``slow``; the fault tests run on one worker under
    pytest-xdist, one after another: each starts gunicorn after a collectstatic into the
    one STATIC_ROOT, and some cut their database off or hold its locks, which a test beside
    them would feel."""
    for item in items:
        path = item.path.as_posix()
        if any(f"/tests/{folder}/" in path for folder in ("browser", "faults", "fuzz")):
            item.add_marker(pytest.mark.slow)
        if "/tests/faults/" in path:
            item.add_marker(pytest.mark.xdist_group("faults"))


@pytest.fixture
def demo(db):
    """The demo collection (load_demo)."""
    from evaluation.management.commands.load_demo import load_demo

    return load_demo()


@pytest.fixture(autouse=True)
def _postgres_only(request):
    """A test marked ``postgres`` (row locks, a second connection, a server to cut off)
    is skipped, with the reason the mark gives, on any other database."""
    marker = request.node.get_closest_marker("postgres")
    if marker is None:
        return
    from django.db import connection

    if connection.vendor != "postgresql":
        why = marker.kwargs.get("reason", "needs PostgreSQL")
        pytest.skip(f"{why}: set DATABASE_URL=postgres://... (this run uses {connection.vendor})")


@pytest.fixture(autouse=True)
def _fast_password_hashing(request, settings):
    """A cheap hasher in tests (the real one costs ~0.25 s a password here); not for tests
    that start a separate server process, which knows only the production hashers."""
    if request.node.get_closest_marker("postgres") is None:
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
