"""The level the next keystroke will use is shown on the focused candidate row."""

import pytest

from annotate.models import Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_focused_candidate_shows_the_next_level(page, live_server, demo):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    focused = page.locator("#workspace [data-item]:focus")
    expect(focused.locator(".text")).to_have_text("Yasunari Kawabata")
    first = page.locator("#cur-level").inner_text()
    expect(focused).to_have_attribute("data-next-level", first)
    page.keyboard.press("b")  # the next judgments at level B: the badge follows
    expect(focused).to_have_attribute("data-next-level", "B")
    after = page.evaluate("""() => getComputedStyle(
        document.activeElement, '::after').content""")
    assert "B" in after
    assert page.locator("#workspace [data-next-level]").count() == 1
    page.keyboard.press("j")  # moving on: the badge moves with the focus
    expect(focused.locator(".text")).not_to_have_text("Yasunari Kawabata")
    expect(focused).to_have_attribute("data-next-level", "B")
    assert page.locator("#workspace [data-next-level]").count() == 1
    page.keyboard.press("n")  # judged: the new focused candidate carries it too
    expect(page.locator("#q-r")).to_have_text("1")
    expect(focused).to_have_attribute("data-next-level", "B")


def test_guidelines_open_state_is_remembered(page, live_server, demo):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    box = page.locator("#guidelines")
    expect(box).to_have_attribute("open", "")  # open the first time
    expect(box.locator(".levels-help")).to_be_visible()
    # the collection's example answers per level (the demo's levels have some)
    examples = box.locator(".level-examples")
    expect(examples).to_have_count(3)
    expect(examples.first).to_contain_text("Paul McCartney (Who played in the Beatles?)")
    expect(examples.first).to_be_visible()
    box.locator("summary").click()
    expect(box).not_to_have_attribute("open", "")
    page.reload()
    expect(page.locator("#workspace [data-item]:focus")).to_have_count(1)
    expect(box).not_to_have_attribute("open", "")  # closed, as left
    page.keyboard.press("n")  # an htmx swap keeps it closed
    expect(page.locator("#q-r")).to_have_text("1")
    page.wait_for_timeout(200)
    expect(box).not_to_have_attribute("open", "")
    box.locator("summary").click()
    page.reload()
    expect(box).to_have_attribute("open", "")
