"""Judging by touch on a phone (390 px, a touch screen): a candidate's own buttons judge
it, they are big enough for a finger, the keyboard legend is not in the way, and nothing is
wider than the screen."""

from __future__ import annotations

import pytest

from annotate.models import AnswerString, Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_assessor_judges_by_tapping_on_a_phone(browser, live_server, demo):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    context = browser.new_context(viewport={"width": 390, "height": 860}, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(m.text) if m.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    try:
        login(page, live_server, "assessor1", "demo-assessor1")
        page.wait_for_url(f"{live_server.url}/collections/")
        page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
        assert page.evaluate("matchMedia('(pointer: coarse)').matches")
        expect(page.locator("#legend")).to_be_hidden()  # no keys to press on a touch screen

        def row(text):
            return page.locator(".pool .cand").filter(has=page.locator(".text", has_text=text))

        first = row("Yasunari Kawabata")
        heights = first.locator(".row-form button, .row-form select, .row-form input:visible")
        for box in (h.bounding_box() for h in heights.all()):
            assert box["height"] >= 33, box  # 2.25rem at the 15px root size
        first.get_by_role("button", name="New").tap()
        expect(page.locator("#q-r")).to_have_text("1")
        second = row("Kawabata").filter(has_not_text="Yasunari")
        second.locator("input[name=ordinal]").tap()
        second.locator("input[name=ordinal]").fill("1")
        second.locator("select[name=level]").select_option("A")
        second.get_by_role("button", name="Add").tap()
        card = page.locator('.synset[data-ordinal="1"]')
        expect(card.locator(".member .text")).to_have_text(["Yasunari Kawabata", "Kawabata"])
        row("Yukio Mishima").get_by_role("button", name="✗").tap()
        expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
        expect(page.locator("#all-judged")).to_be_visible()
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the judging page is {overflow}px wider than the screen"
    finally:
        context.close()
    strings = {s.text: s for s in AnswerString.objects.filter(question=q)}
    full, short = strings["Yasunari Kawabata"], strings["Kawabata"]
    assert full.synset_id is not None and short.synset_id == full.synset_id
    assert (full.level.code, short.level.code) == ("S", "A")
    assert strings["Yukio Mishima"].state == "incorrect"
    assert not problems, "\n".join(problems)
