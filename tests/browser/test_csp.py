"""Pages work under the Content-Security-Policy: no violation is reported in Chromium."""

import pytest

from annotate.models import Question

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_no_csp_violations_on_the_main_pages(page, live_server, demo):
    violations = []
    page.on(
        "console",
        lambda m: (
            violations.append(m.text)
            if "Content Security Policy" in m.text or "Refused to" in m.text
            else None
        ),
    )
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    q = Question.objects.get(collection=demo, qid="EX1-BEATLES")
    runs = list(demo.runs.order_by("name"))
    for url in [
        "/collections/",
        "/collections/demo/",
        "/collections/demo/runs/",
        f"/collections/demo/runs/{runs[0].pk}/",
        "/collections/demo/runs/upload/",
        f"/collections/demo/compare/?a={runs[0].pk}&b={runs[1].pk}",
        "/collections/demo/ranking/",
        "/queue/",
        "/collections/demo/questions/",
        f"/questions/{q.pk}/judge/",
    ]:
        page.goto(live_server.url + url)
        page.wait_for_load_state("load")
    assert not violations, violations
