"""In Chromium: two assessors judge one question independently, each in their own layer,
on the usual judging page and by keyboard; the strings they agree on go to gold; the
organizer adjudicates the other by keyboard; the run's score is computed against gold."""

import re

import pytest
from django.contrib.auth import get_user_model

from annotate import layer_selectors, layers
from annotate.models import JudgingLayer
from tests.factories import make_question, make_run

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def judge_layer(page, live_server, q, username, password, keys):
    """Log in, open the question from my queue (the usual judging page, on the assessor's
    layer) and press ``keys``: (key, text of the string focused when it is pressed); then
    ``d``, done and next."""
    from playwright.sync_api import expect

    page.context.clear_cookies()
    login(page, live_server, username, password)
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/queue/")
    page.locator("tr", has_text=q.qid).get_by_role("link", name=q.qid).click()
    page.wait_for_url(f"{live_server.url}/questions/{q.pk}/judge/")
    expect(page.locator("h1")).to_contain_text("my layer")
    expect(page.locator("#layer-note")).to_contain_text("nobody else's judgments")
    focused = page.locator("#workspace [data-item]:focus .text")
    for key, text in keys:
        expect(focused).to_have_text(text)
        with page.expect_response(lambda r: r.url.endswith(f"/questions/{q.pk}/layer/act/")):
            page.keyboard.press(key)
        expect(page.locator("#key-hint")).not_to_have_text("…")
    expect(page.locator("#all-judged")).to_be_visible()
    assert page.locator("#workspace .notice").count() == 0
    page.keyboard.press("d")
    page.wait_for_url(lambda url: f"/questions/{q.pk}/" not in url)
    assert JudgingLayer.objects.get(question=q, assessor__username=username).done


def test_two_assessors_then_adjudication_then_scores(page, live_server, demo):
    from playwright.sync_api import expect

    User = get_user_model()
    org = User.objects.get(username="organizer")
    a1, a2 = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    q = make_question(
        collection=demo,
        qid="TWICE",
        text="Who wrote Hamlet?",
        unjudged=["Shakespeare", "William Shakespeare", "Marlowe"],
    )
    layers.layers_request(collection=demo, questions=[q], assessors=[a1, a2], by=org)
    make_run(
        collection=demo, owner=org, name="twice-run", answers={"TWICE": ["Marlowe", "Shakespeare"]}
    )
    # candidates most frequent in the runs first: Shakespeare, Marlowe, William Shakespeare
    # assessor1: Shakespeare and William Shakespeare one synset; Marlowe incorrect, undone
    # (u) and judged again
    judge_layer(
        page,
        live_server,
        q,
        "assessor1",
        "demo-assessor1",
        [
            ("n", "Shakespeare"),
            ("x", "Marlowe"),
            ("u", "William Shakespeare"),
            ("1", "William Shakespeare"),
            ("x", "Marlowe"),
        ],
    )
    # assessor2 (blind to assessor1): the same, but Marlowe correct in a synset of its own
    judge_layer(
        page,
        live_server,
        q,
        "assessor2",
        "demo-assessor2",
        [("n", "Shakespeare"), ("n", "Marlowe"), ("1", "William Shakespeare")],
    )
    gold = {s.text: s.synset_id is not None for s in q.strings.exclude(judged_at=None)}
    assert gold == {"Shakespeare": True, "William Shakespeare": True}

    page.context.clear_cookies()
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/collections/demo/agreement/")
    expect(page.locator("#agreement-questions")).to_contain_text("TWICE")
    page.locator("#agreement-questions a", has_text="adjudicate").first.click()
    page.wait_for_url(re.compile(rf".*/questions/{q.pk}/adjudicate/$"))
    expect(page.get_by_text("1 string left to resolve")).to_be_visible()
    marlowe = page.locator("tr.differs", has_text="Marlowe")
    marlowe.focus()
    with page.expect_navigation():
        page.keyboard.press("[")  # take assessor1's judgment: incorrect
    expect(page.get_by_text("0 strings left to resolve")).to_be_visible()
    assert q.strings.get(text="Marlowe").judged_at is not None
    assert q.strings.get(text="Marlowe").synset_id is None
    with page.expect_navigation():
        page.keyboard.press("u")  # undo
    expect(page.get_by_text("1 string left to resolve")).to_be_visible()
    page.locator("tr.differs", has_text="Marlowe").focus()
    with page.expect_navigation():
        page.keyboard.press("[")
    # the run is scored against gold: Marlowe wrong at rank 1, Shakespeare right at 2
    page.goto(f"{live_server.url}/collections/demo/layer-scores/?metric=rr")
    table = page.locator("#layer-rankings")
    expect(table).to_contain_text("layer 1")
    expect(page.locator("h2", has_text="Means against gold")).to_be_visible()
    expect(page.locator("table", has=page.get_by_text("twice-run")).first).to_contain_text("0.5000")


def test_merge_gold_synsets_by_keyboard(page, live_server, demo):
    from playwright.sync_api import expect

    User = get_user_model()
    org = User.objects.get(username="organizer")
    a1, a2 = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    q = make_question(collection=demo, qid="MERGE", synsets=[[("Edo", "S")], [("Tokyo", "A")]])
    layers.layers_request(collection=demo, questions=[q], assessors=[a1, a2], by=org)
    # the question is adjudicated once every layer is done
    for user in (a1, a2):
        layer = layer_selectors.layer_for(question=q, user=user)
        for s in q.strings.all():
            layers.layer_judge(layer=layer, string=s.pk, by=user)
        layers.layer_mark_done(layer=layer, by=user)
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/adjudicate/")
    page.locator("[data-row]", has_text="Edo").focus()
    page.keyboard.press("m")
    expect(page.locator("#merge-note")).to_be_visible()
    page.locator("[data-row]", has_text="Tokyo").focus()
    with page.expect_navigation():
        page.keyboard.press("m")
    assert q.synsets.count() == 1
    assert {s.level.code for s in q.strings.all()} == {"S", "A"}  # levels kept


def test_a_key_on_a_stale_layer_page_is_refused_then_applies(page, live_server, demo):
    """The layer's version goes with every key: a change of the layer made elsewhere (another
    tab) meanwhile makes the key refused with a notice; the next key acts on the fresh page."""
    from playwright.sync_api import expect

    User = get_user_model()
    org = User.objects.get(username="organizer")
    a1, a2 = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    q = make_question(collection=demo, qid="STALE-L", unjudged=["Edo", "Tokyo"])
    layers.layers_request(collection=demo, questions=[q], assessors=[a1, a2], by=org)
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("Edo")
    # meanwhile, in another tab: Tokyo into a new synset of the layer
    layer = layer_selectors.layer_for(question=q, user=a1)
    layers.layer_judge(layer=layer, string=q.strings.get(text="Tokyo").pk, new_group=True, by=a1)
    page.keyboard.press("n")
    expect(page.locator("#workspace .notice")).to_contain_text("since your page was loaded")
    assert set(layer.judgments.values_list("string__text", flat=True)) == {"Tokyo"}
    expect(focused).to_have_text("Edo")
    page.keyboard.press("1")  # Edo into Tokyo's synset, on the refreshed page
    expect(page.locator('.synset[data-ordinal="1"] .member .text')).to_have_text(["Edo", "Tokyo"])
    assert page.locator("#workspace .notice").count() == 0


def test_place_a_string_no_layer_judged_by_keyboard(page, live_server, demo):
    """A string pooled after gold was derived from the layers: on its row of the
    adjudication page, the judging page's keys -- a digit puts it into that gold synset,
    ``n`` into a new one."""
    from annotate.judging import strings_add_unjudged

    User = get_user_model()
    org = User.objects.get(username="organizer")
    a1, a2 = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    q = make_question(collection=demo, qid="PLACE", unjudged=["Edo"])
    layers.layers_request(collection=demo, questions=[q], assessors=[a1, a2], by=org)
    for user in (a1, a2):
        layer = layer_selectors.layer_for(question=q, user=user)
        layers.layer_judge(layer=layer, string=q.strings.get().pk, new_group=True, by=user)
        layers.layer_mark_done(layer=layer, by=user)
    strings_add_unjudged(
        rows=[(q.pk, "tokyo", "Tokyo"), (q.pk, "kyoto", "Kyoto")], source="pool", reason="t"
    )
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/adjudicate/")
    page.locator("[data-row]", has_text="Tokyo").focus()
    with page.expect_navigation():
        page.keyboard.press("1")
    page.locator("[data-row]", has_text="Kyoto").focus()
    with page.expect_navigation():
        page.keyboard.press("n")
    edo, tokyo, kyoto = (q.strings.get(text=t) for t in ("Edo", "Tokyo", "Kyoto"))
    assert tokyo.synset_id == edo.synset_id is not None
    assert kyoto.synset_id not in (None, edo.synset_id)
