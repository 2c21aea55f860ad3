"""In Chromium, the whole loop of new answers: a run with answers nobody has judged is
uploaded, its answers are sent to the pool, the done question they belong to comes back
into its assessor's queue, the assessor judges them by keyboard, and the run's score
changes."""

import re

import pytest

from annotate.models import AnswerString, Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUN = "TDL-1\t1\tMaihama\nTDL-1\t2\tTokyo Bay\nTDL-1\t3\tChiba prefecture\n"


def test_pooled_answers_come_back_and_are_judged_from_the_queue(
    page, live_server, demo, tmp_path, artifacts
):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="TDL-1")
    assert q.status == "done"
    run_file = tmp_path / "loop.tsv"
    run_file.write_text(RUN)
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/collections/demo/runs/upload/")
    page.fill("input[name=name]", "loop")
    page.set_input_files("input[name=file]", str(run_file))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/collections/demo/runs/\d+/$"))
    run_url = page.url
    q_measure = page.locator("#q-TDL-1 td:nth-child(4)")
    expect(q_measure).to_have_text("0.6667")  # only rank 3 is judged (S): 4/6
    expect(page.locator("#pool-to-send")).to_have_text("2 are not in the pool yet")
    pool_button = page.get_by_role("button", name="Send 2 answers to the assessors' pool")
    pool_button.click()
    page.wait_for_url(run_url)
    expect(page.get_by_text("2 unjudged answer(s) of loop sent")).to_be_visible()
    expect(page.locator("#pool-waiting")).to_have_text(
        "2 are in the assessors' pool, waiting for an assessor"
    )
    expect(page.get_by_role("button", name=re.compile("assessors' pool"))).to_have_count(0)
    q.refresh_from_db()
    assert q.status == "in_progress"

    # the assessor finds the question back in the queue, in progress with 2 unjudged
    page.context.clear_cookies()
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/queue/")
    row = page.locator("tr", has=page.locator(f'a[href="/questions/{q.pk}/judge/"]'))
    expect(row.locator(".status")).to_have_text("In progress")
    expect(row.locator("td.num").last).to_have_text("2")
    row.locator("a", has_text="TDL-1").click()
    page.wait_for_url(f"{live_server.url}/questions/{q.pk}/judge/")
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("Maihama")
    kb = page.keyboard
    kb.press("1")  # into synset 1 at the highest level
    expect(focused).to_have_text("Tokyo Bay")
    kb.press("x")
    expect(page.locator("#all-judged")).to_be_visible()
    kb.press("d")  # done and next
    page.wait_for_url(lambda u: not u.endswith(f"/questions/{q.pk}/judge/"))
    q.refresh_from_db()
    assert q.status == "done"
    states = {s.text: s.state for s in AnswerString.objects.filter(question=q)}
    assert states["Maihama"] == "correct" and states["Tokyo Bay"] == "incorrect"

    # the run's score follows: Maihama at rank 1 is credited, nothing is left to pool
    page.context.clear_cookies()
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(run_url)
    expect(q_measure).to_have_text("1.0000")
    expect(page.locator("#pool-counts")).to_contain_text("0 distinct answers of this run")
    page.screenshot(path=str(artifacts / "pool-loop.png"), full_page=True)
