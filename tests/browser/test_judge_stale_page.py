"""A digit pressed on a page someone else has renumbered meanwhile is refused with a notice
(the page sends the synset list it shows with each keypress), and the next keypress on the
refreshed page acts on what that page shows."""

import pytest

from annotate import judging
from annotate.models import AnswerString
from tests.factories import add_member, make_collection, make_question, make_user

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_digit_on_a_renumbered_page_is_refused_then_applies_on_the_fresh_page(page, live_server):
    from playwright.sync_api import expect

    c = make_collection(slug="stale")
    q = make_question(
        collection=c,
        qid="S1",
        text="Cities?",
        synsets=[[("Paris", "S")], [("Lyon", "A")], [("Nice", "B")]],
        unjudged=["Marseille"],
    )
    ass, org = make_user(username="ass", password="ass-pw-2231"), make_user()
    add_member(collection=c, user=ass, role="assessor")
    q.assessors.add(ass)
    login(page, live_server, "ass", "ass-pw-2231")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("Marseille")
    # meanwhile someone else deletes Paris: Lyon is now synset 1, Nice synset 2
    paris = AnswerString.objects.get(question=q, text="Paris")
    judging.string_delete(question=q.pk, string=paris.pk, by=org)
    page.keyboard.press("2")  # meant Lyon (2 on this page)
    expect(page.locator("#workspace .notice")).to_contain_text("renumbered")
    assert AnswerString.objects.get(question=q, text="Marseille").state == "unjudged"
    expect(page.locator("#q-r")).to_have_text("2")
    expect(focused).to_have_text("Marseille")
    page.keyboard.press("1")  # Lyon on the refreshed page
    expect(page.locator('.synset[data-ordinal="1"] .member .text')).to_have_text(
        ["Lyon", "Marseille"]
    )
    assert page.locator("#workspace .notice").count() == 0
