"""Every role walks its pages at laptop (1366 px) and phone (390 px) width: no console
error (CSP violations included), no failed request, nothing wider than the screen, and the
htmx actions of the upload, judging and members pages swap in without a violation.  A
participant also meets the 403 and 404 pages: their heading, no console line but the
browser's own "Failed to load resource" for the status."""

from __future__ import annotations

import pytest

from annotate.models import Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1366, 390)
PASSWORDS = {
    "organizer": "demo-organizer",
    "assessor1": "demo-assessor1",
    "participant": "demo-participant",
}


def _pages(role: str, demo, agreement) -> list[str]:
    q = Question.objects.get(collection=demo, qid="EX1-BEATLES")
    runs = list(demo.runs.order_by("name"))
    common = ["/collections/", "/collections/demo/", f"/collections/{agreement.slug}/"]
    if role == "assessor1":
        # a layer of the agreement study, done: the page compares it with the others'
        layered = Question.objects.filter(collection=agreement).order_by("qid").first()
        return [
            *common,
            "/queue/",
            f"/questions/{q.pk}/judge/",
            f"/questions/{layered.pk}/judge/",
            "/collections/demo/questions/",
            f"/collections/{agreement.slug}/questions/",
            "/queue/adjudicate/",
        ]
    scores = [
        "/collections/demo/runs/",
        f"/collections/demo/runs/{runs[0].pk}/",
        f"/collections/demo/compare/?a={runs[0].pk}&b={runs[1].pk}",
        "/collections/demo/ranking/",
        "/runs/",
        f"/collections/demo/runs/{runs[0].pk}/withdraw/",
        f"/collections/demo/runs/{runs[0].pk}/replace/",
    ]
    if role == "participant":  # the owner of the demo's runs
        return [
            *common,
            "/collections/demo/runs/",
            f"/collections/demo/runs/{runs[0].pk}/",
            "/collections/demo/ranking/",
            "/collections/demo/runs/upload/",
            "/runs/",
            f"/collections/demo/runs/{runs[0].pk}/withdraw/",
            f"/collections/demo/runs/{runs[0].pk}/replace/",
            "/account/tokens/",
            "/jobs/",
        ]
    waiting = Question.objects.filter(collection=agreement).awaiting_adjudication().first()
    return [
        *common,
        *scores,
        "/collections/demo/runs/upload/",
        "/queue/",
        "/collections/demo/questions/",
        f"/questions/{q.pk}/judge/",
        "/collections/demo/members/",
        "/collections/demo/edit/",
        "/collections/demo/import/",
        "/collections/demo/dashboard/",
        "/collections/demo/reliability/",
        "/collections/new/",
        "/account/tokens/",
        "/queue/adjudicate/",
        f"/collections/{agreement.slug}/agreement/",
        f"/collections/{agreement.slug}/layer-scores/",
        f"/collections/{agreement.slug}/questions/",
        f"/collections/{agreement.slug}/runs/",
        f"/questions/{waiting.pk}/adjudicate/",
        "/archives/import/",
        "/jobs/",
    ]


# pages a role is refused or that do not exist: (address, status, heading); the browser's
# one "Failed to load resource ... 403/404" console line and the status are expected there
ERROR_PAGES = {
    "participant": [
        ("/collections/new/", 403, "You cannot open this page"),
        ("/collections/no-such-collection/", 404, "Page not found"),
    ],
}


def _watch(page) -> list[str]:
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
    )
    return problems


def _overflow(page) -> int:
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("role", list(PASSWORDS))
def test_every_page_of_a_role_at_laptop_and_phone_width(
    browser, live_server, demo, agreement, role, width
):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems = _watch(page)
    try:
        login(page, live_server, role, PASSWORDS[role])
        page.wait_for_url(f"{live_server.url}/collections/")
        for url in _pages(role, demo, agreement):
            response = page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            if response.status != 200:
                problems.append(f"{url}: HTTP {response.status}")
            extra = _overflow(page)
            if extra > 0:
                problems.append(f"{url} at {width}px is {extra}px wider than the screen")
        for url, status, heading in ERROR_PAGES.get(role, []):
            before = len(problems)
            response = page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            assert response.status == status, url
            expect(page.locator("main h1")).to_have_text(heading)
            expect(page.locator("#main a", has_text="back to your collections")).to_be_visible()
            expected = {
                f"HTTP {status} {live_server.url}{url}",
                "console error: Failed to load resource: the server responded with a status "
                f"of {status} ({'Forbidden' if status == 403 else 'Not Found'})",
            }
            new = problems[before:]
            assert set(new) <= expected, new
            del problems[before:]
            extra = _overflow(page)
            if extra > 0:
                problems.append(f"{url} at {width}px is {extra}px wider than the screen")
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_htmx_swaps_raise_no_violation(page, live_server, demo, tmp_path):
    from playwright.sync_api import expect

    problems = _watch(page)
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    # judging: one key judges a candidate (an htmx swap of the workspace)
    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    page.keyboard.press("n")
    expect(page.locator("#q-r")).to_have_text("1")
    # members: add one (an htmx form)
    page.goto(f"{live_server.url}/collections/demo/members/")
    page.fill("input[name=username]", "assessor2")
    page.locator("form:has(input[name=username]) button[type=submit]").first.click()
    expect(page.locator("#members")).to_contain_text("assessor2")
    page.select_option('select[aria-label="role of assessor2"]', "assessor")
    page.locator('form:has(select[aria-label="role of assessor2"]) button[type=submit]').click()
    page.wait_for_load_state("networkidle")
    # upload: check a file (the page's preview)
    run = tmp_path / "walk.tsv"
    run.write_text("SNOW-COUNTRY\t1\tKawabata\n", encoding="utf-8")
    page.goto(f"{live_server.url}/collections/demo/runs/upload/")
    page.fill("input[name=name]", "walk-run")
    page.set_input_files("input[type=file]", str(run))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url("**/runs/**")
    page.wait_for_load_state("networkidle")
    assert not problems, "\n".join(problems)


def test_the_navigation_collapses_behind_a_menu_button_on_phones(browser, live_server, demo):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 860})
    page = context.new_page()
    try:
        login(page, live_server, "organizer", "demo-organizer")
        page.wait_for_url(f"{live_server.url}/collections/")
        queue = page.locator("#mainnav a", has_text="My queue")
        expect(queue).to_be_hidden()
        page.click("#navbutton")
        expect(queue).to_be_visible()
        expect(page.locator("#navbutton")).to_have_attribute("aria-expanded", "true")
        queue.click()
        page.wait_for_url(f"{live_server.url}/queue/")
    finally:
        context.close()
    page = browser.new_page(viewport={"width": 1366, "height": 860})
    try:
        login(page, live_server, "organizer", "demo-organizer")
        page.wait_for_url(f"{live_server.url}/collections/")
        expect(page.locator("#navbutton")).to_be_hidden()
        expect(page.locator("#mainnav a", has_text="My queue")).to_be_visible()
    finally:
        page.close()
