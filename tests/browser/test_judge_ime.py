"""Keyboard judging with a Japanese input method (IME) on, in Chromium: keys of a
composition (compositionstart ... compositionend, keydown with isComposing, key "Process",
keyCode 229) judge nothing, on the page or in a text field, and a full-width digit or letter
(the IME's full-width mode) judges like its ASCII key."""

import pytest

from annotate.models import AnswerString, Question
from tests.factories import make_question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# what an IME sends while the assessor types "さん" (romaji s, a, n) then commits it:
# the first key starts the composition ("Process", keyCode 229), the others carry
# isComposing; the committing Enter arrives as keyCode 229 after compositionend (Safari)
COMPOSE = """(target) => {
  const el = target || document.activeElement;
  const key = (init) => el.dispatchEvent(new KeyboardEvent("keydown",
    Object.assign({bubbles: true, cancelable: true, composed: true}, init)));
  const comp = (type, data) => el.dispatchEvent(new CompositionEvent(type,
    {bubbles: true, cancelable: true, data}));
  key({key: "Process", code: "KeyS", keyCode: 229});
  comp("compositionstart", "");
  comp("compositionupdate", "s");
  key({key: "a", code: "KeyA", isComposing: true});
  comp("compositionupdate", "さ");
  key({key: "n", code: "KeyN", isComposing: true});
  comp("compositionupdate", "さn");
  key({key: "3", code: "Digit3"});            // no isComposing: between start and end
  key({key: "x", code: "KeyX", keyCode: 229});
  key({key: "Process", code: "KeyN", keyCode: 229, isComposing: true});
  comp("compositionupdate", "さん");
  key({key: "Escape", code: "Escape", isComposing: true});
  key({key: "Enter", code: "Enter", isComposing: true});
  comp("compositionend", "さん");
  key({key: "Enter", code: "Enter", keyCode: 229});
}"""

FULL_WIDTH_KEY = """([key, code]) => document.activeElement.dispatchEvent(
  new KeyboardEvent("keydown", {key, code, bubbles: true, cancelable: true}))"""


def ime(text: str) -> dict:
    """Input.imeSetComposition's parameters: ``text`` composed, the caret at its end."""
    return {"text": text, "selectionStart": len(text), "selectionEnd": len(text)}


def _states(q):
    return {
        s.text: (s.state, s.synset and s.synset.ordinal, s.level and s.level.code)
        for s in AnswerString.objects.filter(question=q).select_related("synset", "level")
    }


def _open(page, live_server, q):
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    writes = []
    page.on("request", lambda r: writes.append(r.url) if r.method == "POST" else None)
    return writes


def test_keys_of_a_composition_judge_nothing_then_full_width_keys_judge(page, live_server, demo):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    before, version = _states(q), q.version
    writes = _open(page, live_server, q)
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("Yasunari Kawabata")
    expect(page.locator("#ime-note")).to_contain_text("半角/全角")
    expect(page.locator("#ime-note")).to_be_visible()

    page.evaluate(COMPOSE, None)
    expect(page.locator("#key-hint")).to_contain_text("IME")
    page.wait_for_timeout(500)  # time for any request those keys might have sent
    assert writes == []
    q.refresh_from_db()
    assert (_states(q), q.version) == (before, version)
    expect(focused).to_have_text("Yasunari Kawabata")  # j/k/Enter of the text moved nothing
    expect(page.locator("#legend-full")).to_be_hidden()

    # after the composition, full-width keys are the shortcuts: ｎ new synset, １ into
    # synset 1, ｘ incorrect -- as n, 1, x (test_judge.py)
    r = page.locator("#q-r")
    page.evaluate(FULL_WIDTH_KEY, ["ｎ", "KeyN"])
    expect(r).to_have_text("1")
    expect(focused).to_have_text("Kawabata")
    page.evaluate(FULL_WIDTH_KEY, ["１", "Digit1"])
    expect(focused).to_have_text("Yukio Mishima")
    page.evaluate(FULL_WIDTH_KEY, ["ｘ", "KeyX"])
    expect(page.locator(".incorrect .text")).to_have_text(["Yukio Mishima"])
    assert page.locator(".notice").count() == 0
    assert _states(q) == {
        "Yasunari Kawabata": ("correct", 1, "S"),
        "Kawabata": ("correct", 1, "S"),
        "Yukio Mishima": ("incorrect", None, None),
    }


def test_full_width_three_puts_a_candidate_into_synset_three(page, live_server, demo):
    from django.contrib.auth import get_user_model
    from playwright.sync_api import expect

    q = make_question(
        collection=demo,
        qid="FULL-WIDTH",
        synsets=[[("Edo", "S")], [("Tokyo", "S")], [("Kyoto", "A")]],
        unjudged=["Heian-kyo"],
    )
    q.assessors.add(get_user_model().objects.get(username="assessor1"))
    _open(page, live_server, q)
    expect(page.locator("#workspace [data-item]:focus .text")).to_have_text("Heian-kyo")
    page.evaluate(FULL_WIDTH_KEY, ["ａ", "KeyA"])  # level A for the next judgment
    expect(page.locator("#cur-level")).to_have_text("A")
    page.evaluate(FULL_WIDTH_KEY, ["３", "Digit3"])  # U+FF13
    expect(page.locator('.synset[data-ordinal="3"] .member .text')).to_have_text(
        ["Kyoto", "Heian-kyo"]
    )
    assert _states(q)["Heian-kyo"] == ("correct", 3, "A")


def test_typing_japanese_in_a_text_field_triggers_no_shortcut(page, live_server, demo):
    """A real composition (Chrome's Input.imeSetComposition) in the Add-a-string field and
    in the notes: the keys typed meanwhile stay in the field, Escape cancels the composition
    without leaving the field, and nothing is judged."""
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    before, version = _states(q), q.version
    writes = _open(page, live_server, q)
    expect(page.locator("#workspace [data-item]:focus .text")).to_have_text("Yasunari Kawabata")
    cdp = page.context.new_cdp_session(page)
    for field in ("#add-text", "#notes"):
        page.locator(field).focus()
        cdp.send("Input.imeSetComposition", ime("かわ"))
        page.evaluate(COMPOSE, None)  # the IME's keys, dispatched in the field
        for key in ("n", "x", "1", "d"):
            page.keyboard.press(key)  # keys typed while Chrome holds the composition
        cdp.send("Input.imeSetComposition", ime("かわばた"))
        page.keyboard.press("Escape")  # cancels the conversion, stays in the field
        expect(page.locator(field)).to_be_focused()
        cdp.send("Input.insertText", {"text": "川端"})
        expect(page.locator(field)).to_be_focused()
        assert "川端" in page.locator(field).input_value()
    page.wait_for_timeout(500)
    assert writes == []
    q.refresh_from_db()
    assert (_states(q), q.version) == (before, version)
