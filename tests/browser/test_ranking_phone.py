"""The ranking page's all-pairs matrix at desktop and phone width: with a dozen runs of
long names it scrolls inside its own box, the page itself never scrolls sideways, and the
Tukey HSD link recomputes it."""

import pytest

from tests.factories import add_member, make_collection, make_question, make_run, make_user

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _collection():
    c = make_collection(slug="matrix")
    for i in range(10):
        make_question(collection=c, qid=f"Q{i}", synsets=[[(f"a{i}", "S")], [(f"b{i}", "A")]])
    org = make_user(username="matrix-org", password="matrix-pw-123")
    add_member(collection=c, user=org, role="organizer")
    for k in range(12):
        answers = {
            f"Q{i}": ([f"a{i}"] if (i + k) % 3 else [f"b{i}", f"a{i}"]) if i <= k else ["x"]
            for i in range(10)
        }
        make_run(collection=c, owner=org, name=f"system-with-a-long-name-{k:02d}", answers=answers)
    return c


@pytest.mark.parametrize("width", [1366, 390])
def test_ranking_matrix_scrolls_in_its_box(browser, live_server, artifacts, width):
    _collection()
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        login(page, live_server, "matrix-org", "matrix-pw-123")
        page.wait_for_url(f"{live_server.url}/collections/")
        page.goto(f"{live_server.url}/collections/matrix/ranking/")
        matrix = page.locator("#pair-matrix")
        assert matrix.locator("tbody tr").count() == 12
        assert matrix.locator("td.diag").count() == 12
        box = page.locator(".matrix-scroll")
        assert box.bounding_box()["width"] <= width
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page is {overflow}px wider than the screen"
        scrolls = page.evaluate(
            "(() => { const b = document.querySelector('.matrix-scroll');"
            " return b.scrollWidth > b.clientWidth; })()"
        )
        assert scrolls == (width < 600)
        # each cell stays on one line (readable), the interval next to each mean too
        cell = matrix.locator("tbody tr").first.locator("td").nth(2).bounding_box()
        assert cell["height"] < 40
        assert page.locator("#ranking .ci").count() == 12 * 5
        page.screenshot(path=str(artifacts / f"ranking-matrix-{width}.png"), full_page=True)
        page.locator("#ranking").screenshot(path=str(artifacts / f"ranking-table-{width}.png"))
        box.screenshot(path=str(artifacts / f"ranking-box-{width}.png"))
        page.get_by_role("link", name="Randomised Tukey HSD instead").click()
        page.wait_for_url("**test=tukey**")
        assert "1000 permutations, seed 0" in page.locator("main").inner_text()
        assert page.locator("#pair-matrix tbody tr").count() == 12
    finally:
        context.close()
    assert not errors, errors
