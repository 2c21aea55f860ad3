import os

import pytest

# Playwright's sync API runs an event loop in the test thread; Django's ORM refuses to run
# in such a thread unless told that this is deliberate (only tests do this).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def demo(db):
    """The demo collection (load_demo)."""
    from annotate.management.commands.load_demo import load_demo
    return load_demo()
