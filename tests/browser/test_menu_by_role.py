"""The main menu as each role sees it in the browser: participants get no "My queue" and
no "New collection", assessors no "Runs" (tests/test_navigation.py checks the HTML)."""

from __future__ import annotations

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORDS = {
    "organizer": "demo-organizer",
    "assessor1": "demo-assessor1",
    "participant": "demo-participant",
}
MENUS = {
    "organizer": ["Collections", "My queue", "Runs", "Jobs", "API tokens"],
    "assessor1": ["Collections", "My queue"],
    "participant": ["Collections", "Runs", "Jobs", "API tokens"],
}


def test_the_menu_entries_differ_by_role(browser, live_server, demo):
    from playwright.sync_api import expect

    seen = {}
    for role, password in PASSWORDS.items():
        context = browser.new_context(viewport={"width": 1366, "height": 860})
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            login(page, live_server, role, password)
            page.wait_for_url(f"{live_server.url}/collections/")
            menu = page.locator("#mainnav a")
            expect(menu.first).to_be_visible()
            seen[role] = [t.strip() for t in menu.all_inner_texts()]
            new = page.get_by_role("link", name="New collection")
            expect(new).to_have_count(1 if role == "organizer" else 0)
        finally:
            context.close()
    assert seen == MENUS
    assert "My queue" not in seen["participant"] and "Runs" not in seen["assessor1"]
