"""An assessor judges a demo question with the keyboard only."""

import pytest

from annotate.models import AnswerString, Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_assessor_judges_with_the_keyboard_only(page, live_server, demo, artifacts):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    focused = page.locator("#workspace [data-item]:focus .text")
    r = page.locator("#q-r")
    expect(focused).to_have_text("Yasunari Kawabata")  # the first candidate has the focus
    kb = page.keyboard
    kb.press("s")
    kb.press("n")  # synset 1, level S
    expect(r).to_have_text("1")
    expect(focused).to_have_text("Kawabata")
    kb.press("b")
    kb.press("n")  # synset 2, level B
    expect(r).to_have_text("2")
    expect(focused).to_have_text("Yukio Mishima")
    kb.press("x")  # incorrect
    expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
    kb.press("u")  # undo: back among the candidates
    expect(page.locator(".pool .cand .text")).to_have_text(["Yukio Mishima"])
    kb.press("k")  # focus up to the candidate again
    expect(focused).to_have_text("Yukio Mishima")
    kb.press("x")
    expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
    # no candidate left: the focus does not fall onto a judged string
    expect(page.locator("#all-judged")).to_be_visible()
    expect(page.locator("#workspace [data-item]:focus")).to_have_count(0)
    kb.press("j")  # entering the strings is an explicit key
    expect(focused).to_have_text("Yukio Mishima")
    kb.press("j")
    expect(focused).to_have_text("Yasunari Kawabata")  # first string of synset 1
    kb.press("j")
    expect(focused).to_have_text("Kawabata")
    kb.press("a")  # change the level of the focused string
    expect(page.locator('.synset[data-ordinal="2"] .badge').first).to_have_text("A")
    kb.press("m")
    kb.press("1")  # merge synset 2 into synset 1
    expect(r).to_have_text("1")
    cards = page.locator(".synset")
    expect(cards.locator(".member .text")).to_have_text(["Yasunari Kawabata", "Kawabata"])
    assert page.locator(".notice").count() == 0

    page.reload()
    expect(r).to_have_text("1")
    expect(page.locator(".synset .member")).to_have_text(
        ["S Yasunari Kawabata edit", "A Kawabata edit"], use_inner_text=True
    )
    expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
    page.screenshot(path=str(artifacts / "judge-keyboard.png"), full_page=True)

    states = {
        s.text: (s.state, s.synset and s.synset.ordinal, s.level and s.level.code)
        for s in AnswerString.objects.filter(question=q).select_related("synset", "level")
    }
    assert states == {
        "Yasunari Kawabata": ("correct", 1, "S"),
        "Kawabata": ("correct", 1, "A"),
        "Yukio Mishima": ("incorrect", None, None),
    }


def _states(q):
    return {
        s.text: (s.state, s.synset and s.synset.ordinal, s.level and s.level.code)
        for s in AnswerString.objects.filter(question=q).select_related("synset", "level")
    }


def test_keys_after_the_last_candidate_change_nothing(page, live_server, demo):
    """Judging keys act on candidates only: once every string is judged, x b 3 x change
    nothing, a d typed ahead of the last judgment does not mark the question done, Enter
    goes on without marking it, and d pressed on the "all strings judged" page does."""
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    judge_url = f"{live_server.url}/questions/{q.pk}/judge/"
    page.goto(judge_url)
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("Yasunari Kawabata")
    kb = page.keyboard
    kb.press("s")
    kb.press("n")
    expect(focused).to_have_text("Kawabata")
    kb.press("1")
    expect(focused).to_have_text("Yukio Mishima")
    kb.press("x")
    kb.press("d")  # typed ahead while the last judgment is in flight: dropped
    expect(page.locator("#all-judged")).to_be_visible()
    expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
    expect(page.locator("#q-status")).to_have_text("In progress")
    page.wait_for_timeout(500)  # time for a replayed d to have been sent
    q.refresh_from_db()
    assert q.status == "in_progress"
    states, version = _states(q), q.version
    assert states == {
        "Yasunari Kawabata": ("correct", 1, "S"),
        "Kawabata": ("correct", 1, "S"),
        "Yukio Mishima": ("incorrect", None, None),
    }

    for key in "xb3x":
        kb.press(key)
    expect(page.locator("#key-hint")).to_contain_text("all strings judged")
    page.wait_for_timeout(500)  # time for any request those keys might have sent
    q.refresh_from_db()
    assert (_states(q), q.version, q.status) == (states, version, "in_progress")
    assert page.locator(".notice").count() == 0

    kb.press("Enter")  # next question, this one not marked done
    page.wait_for_url(lambda u: u != judge_url)
    q.refresh_from_db()
    assert q.status == "in_progress"

    page.goto(judge_url)
    expect(page.locator("#all-judged")).to_be_visible()
    kb.press("d")  # shown "all strings judged": done and next
    page.wait_for_url(lambda u: u != judge_url)
    q.refresh_from_db()
    assert (_states(q), q.status) == (states, "done")
