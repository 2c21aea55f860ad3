"""The adjudication page in Chromium at 1366 px: the focus arrives on the first row the
layers differ on, each row's eight buttons (take either layer's judgment or synset, the
three levels, incorrect) sit on one line, and the keys of an IME composition click none."""

import pytest
from django.contrib.auth import get_user_model

from annotate import layers
from annotate.models import JudgingLayer
from tests.annotate.layer_study import PLAN_A, PLAN_B, judge
from tests.factories import make_question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def adjudicated(demo):
    """Q1 of the layer study in the demo collection, both layers done by assessor1 and
    assessor2: Lennon and John Lennon agreed (gold synset 1), McCartney and Ringo differ."""
    User = get_user_model()
    org = User.objects.get(username="organizer")
    a, b = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    q = make_question(
        collection=demo,
        qid="BEATLES",
        text="Who was in the Beatles?",
        unjudged=["Lennon", "John Lennon", "McCartney", "Ringo", "Yoko"],
    )
    layers.layers_request(collection=demo, questions=[q], assessors=[a, b], by=org)
    ids = {s.text: s.pk for s in q.strings.all()}
    for user, plan in ((a, PLAN_A), (b, PLAN_B)):
        layer = JudgingLayer.objects.get(question=q, assessor=user)
        judge(layer, user, ids, plan)
        layers.layer_mark_done(layer=layer, by=user)
    return q


def test_focus_on_the_first_row_that_differs_and_buttons_on_one_line(
    page, live_server, adjudicated, artifacts
):
    from playwright.sync_api import expect

    q = adjudicated
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/adjudicate/")
    expect(page.locator("[data-row]:focus")).to_contain_text("McCartney")
    assert page.locator("[data-row]").first.inner_text().startswith("Lennon")

    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll("#adjudication [data-row]")).map((tr) => {
          const tops = Array.from(tr.querySelectorAll("td:last-child button"))
            .map((b) => Math.round(b.getBoundingClientRect().top));
          return [tr.cells[0].innerText, tops.length, new Set(tops).size];
        })"""
    )
    page.screenshot(path=str(artifacts / "adjudicate-1366.png"), full_page=True)
    # a row of a gold synset: take assessor1, take assessor2, their two synsets, S A B, x
    eight = [r for r in rows if r[1] == 8]
    assert eight, rows
    assert all(lines == 1 for _text, _n, lines in rows), rows
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width


def test_keys_of_a_composition_click_nothing(page, live_server, adjudicated):
    q = adjudicated
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/adjudicate/")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.evaluate(
        """() => {
          const el = document.activeElement;
          const key = (init) => el.dispatchEvent(new KeyboardEvent("keydown",
            Object.assign({bubbles: true, cancelable: true}, init)));
          el.dispatchEvent(new CompositionEvent("compositionstart", {bubbles: true}));
          key({key: "Process", keyCode: 229});
          key({key: "[", isComposing: true});
          key({key: "x"});
          el.dispatchEvent(new CompositionEvent("compositionend", {bubbles: true, data: "「"}));
          key({key: "Enter", keyCode: 229});
        }"""
    )
    page.wait_for_timeout(500)
    assert posts == []
    # after it, a full-width ［ (the IME's full-width mode) takes assessor1's judgment
    with page.expect_navigation():
        page.evaluate(
            """() => document.activeElement.dispatchEvent(new KeyboardEvent("keydown",
              {key: "［", bubbles: true, cancelable: true}))"""
        )
    assert q.strings.get(text="McCartney").judged_at is not None
