"""The 500 page as a visitor meets it, with DEBUG off on a live server: inside the site's
layout (top bar, menu, stylesheet, footer) at laptop and phone width, rendered without the
database (templates/base_minimal.html, config/errors.py)."""

from __future__ import annotations

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def boom_site(settings):
    settings.DEBUG = False  # Django's own debug page otherwise
    settings.ROOT_URLCONF = "tests.browser.boom_urls"


@pytest.mark.parametrize("width", (1366, 390))
def test_the_500_page_sits_in_the_site_layout(browser, live_server, demo, boom_site, width):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"page error: {e}"))
    try:
        login(page, live_server, "participant", "demo-participant")
        page.wait_for_url(f"{live_server.url}/collections/")
        response = page.goto(f"{live_server.url}/boom/")
        assert response.status == 500
        expect(page.locator("h1")).to_have_text("Server error")
        expect(page).to_have_title("Server error · QA synsets")
        expect(page.locator(".topbar .brand")).to_be_visible()
        # the stylesheet applies: the dark top bar, the card
        assert (
            page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor")
            == "rgb(29, 35, 48)"
        )
        assert page.evaluate("getComputedStyle(document.querySelector('.card')).borderRadius") == (
            "8px"
        )
        expect(page.locator("footer.sitefooter")).to_be_visible()
        collections = page.locator("#mainnav a", has_text="Collections")
        if width < 760:  # the menu collapses behind its button (static/js/nav.js runs)
            expect(collections).to_be_hidden()
            page.click("#navbutton")
        expect(collections).to_be_visible()
        assert (
            page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            <= 0
        )
        page.locator("main a", has_text="back to your collections").click()
        page.wait_for_url(f"{live_server.url}/collections/")
        expect(page.locator("h1")).to_have_text("Collections")
    finally:
        context.close()
    # the 500 itself is the one console line
    assert len(console) == 1 and "status of 500" in console[0], console
