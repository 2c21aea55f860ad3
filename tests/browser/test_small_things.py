"""Small things people tripped on, in Chromium: the phone menu closes on Escape; the
visually hidden labels and headers (``.sr-only``) are read but not shown."""

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_phone_menu_closes_on_escape(browser, live_server, demo):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        login(page, live_server, "organizer", "demo-organizer")
        page.wait_for_url(f"{live_server.url}/collections/")
        button, menu = page.locator("#navbutton"), page.locator("#mainnav")
        expect(menu).to_be_hidden()
        button.click()
        expect(menu).to_be_visible()
        expect(button).to_have_attribute("aria-expanded", "true")
        menu.get_by_role("link", name="Runs").focus()  # tabbed into the menu
        page.keyboard.press("Escape")
        expect(menu).to_be_hidden()
        expect(button).to_have_attribute("aria-expanded", "false")
        expect(button).to_be_focused()
        page.keyboard.press("Escape")  # closed already: nothing happens
        expect(menu).to_be_hidden()
    finally:
        context.close()


def _box(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return (box["width"], box["height"]) if box else (0, 0)


def test_visually_hidden_labels_are_read_not_shown(page, live_server, demo):
    from playwright.sync_api import expect

    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    # the question list's select column: its header is named, not shown
    page.goto(f"{live_server.url}/collections/{demo.slug}/questions/")
    header = page.locator("thead th .sr-only")
    expect(header).to_have_text("select")
    assert _box(header) <= (1, 1)
    expect(page.get_by_role("columnheader", name="select")).to_have_count(1)
    # the correctness levels: 4 rows (3 levels and a blank one) of 5 named controls
    page.goto(f"{live_server.url}/collections/new/")
    for n in range(1, 5):
        for name in ("code", "label", "gain", "examples"):
            expect(page.get_by_label(f"{name} of level {n}", exact=True)).to_have_count(1)
        expect(page.get_by_label(f"delete level {n}", exact=True)).to_have_count(1)
        assert _box(page.locator("label", has_text=f"code of level {n}")) <= (1, 1)
    expect(page.get_by_label("code of level 1", exact=True)).to_have_value("S")
