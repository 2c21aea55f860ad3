"""The compare page at desktop and phone width: the plot stays readable (it scrolls inside
its frame instead of shrinking), the page itself does not scroll sideways, and tapping a
question's column of the plot shows that question with both ranked lists."""

import pytest

from evaluation.models import Run

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 390])
def test_compare_page_at_desktop_and_phone_width(browser, live_server, demo, artifacts, width):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, has_touch=width < 600, is_mobile=width < 600
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and "favicon" not in (m.location or {}).get("url", "")
            else None
        ),
    )
    try:
        login(page, live_server, "participant", "demo-participant")
        page.wait_for_url(f"{live_server.url}/collections/")
        a, b = (Run.objects.get(collection=demo, name=n).pk for n in ("noAF", "AF"))
        page.goto(f"{live_server.url}/collections/demo/compare/?a={a}&b={b}")
        plot = page.locator("#diff-plot")
        box = plot.bounding_box()
        # the plot keeps at least 38rem of width (labels readable) inside a frame that
        # scrolls on a phone; the page itself fits the screen
        assert box["width"] >= 540
        frame = page.locator(".plot-scroll")
        assert frame.bounding_box()["width"] <= width
        # nothing of the page's content sticks out (the site's header is not this page's)
        wide = page.evaluate("""() => [...document.querySelectorAll('main *')]
            .filter(el => !el.closest('.plot-scroll, .table-scroll'))
            .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
            .map(el => el.tagName + '.' + el.className)""")
        assert wide == []
        assert page.locator("#plot-legend").inner_text().count("difference") >= 2
        page.screenshot(path=str(artifacts / f"compare-{width}.png"), full_page=True)
        column = page.locator("#diff-plot a[data-qid='EX3-LOVE']")
        column.scroll_into_view_if_needed()
        if width < 600:
            column.locator("rect").tap()
        else:
            column.locator("rect").click()
        page.wait_for_url("**#side-EX3-LOVE")
        side = page.locator("[id='side-EX3-LOVE']")
        assert side.is_visible() and side.locator("ol.marks").count() == 2
        assert "What is love?" in side.inner_text()
    finally:
        context.close()
    assert not errors, errors
