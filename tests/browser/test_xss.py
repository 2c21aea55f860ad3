"""Answer strings and question text are untrusted: shown as text, never run."""

import pytest

from tests.factories import add_member, make_collection, make_question, make_run, make_user

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVIL_Q = '<script>window.__xss = "question"</script>Who?'
EVIL_A = "<img src=x onerror=\"window.__xss = 'answer'\">"
EVIL_B = '"><svg onload="window.__xss=\'attr\'">'


def test_scripts_in_answers_and_questions_do_not_run(page, live_server):
    c = make_collection(slug="xss", open_for_submissions=True)
    make_question(
        collection=c, qid="Q<1>", text=EVIL_Q, synsets=[[(EVIL_A, "S")]], incorrect=[EVIL_B]
    )
    org = make_user(username="org", password="pw-org-123456")
    add_member(collection=c, user=org, role="organizer")
    a = make_run(collection=c, owner=org, name="<b>a</b>", answers={"Q<1>": [EVIL_B, EVIL_A]})
    b = make_run(collection=c, owner=org, name="b", answers={"Q<1>": [EVIL_A, "plain"]})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, live_server, "org", "pw-org-123456")
    page.wait_for_url(f"{live_server.url}/collections/")
    for url in [
        "/collections/xss/",
        "/collections/xss/runs/",
        f"/collections/xss/runs/{a.pk}/",
        f"/collections/xss/compare/?a={a.pk}&b={b.pk}&question=Q%3C1%3E",
        "/collections/xss/ranking/",
    ]:
        page.goto(live_server.url + url)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None, url
        assert page.locator("img[src=x]").count() == 0 and page.locator("svg[onload]").count() == 0
    page.goto(f"{live_server.url}/collections/xss/runs/{a.pk}/")
    page.locator("details summary").first.click()
    assert EVIL_A in page.locator("ol.marks").first.inner_text()
    assert not dialogs
