"""The API's interactive docs work offline under the Content-Security-Policy: Swagger UI
(shipped with django-ninja, served from our static files) renders every endpoint."""

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_api_docs_render_without_csp_violations_or_outside_requests(page, live_server, demo):
    violations, outside = [], []
    page.on(
        "console",
        lambda m: (
            violations.append(m.text)
            if "Content Security Policy" in m.text or "Refused to" in m.text
            else None
        ),
    )
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(live_server.url) and not r.url.startswith("data:")
            else None
        ),
    )
    login(page, live_server, "participant", "demo-participant")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/api/docs")
    page.wait_for_selector(".swagger-ui .opblock-summary-path")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any(
        "/api/collections/{slug}/runs/{run_id}/scores" in p.replace("\u200b", "") for p in paths
    ), paths
    assert page.locator("button.authorize").count() == 1  # the bearer token can be entered
    page.get_by_role("link", name="Back to the app").click()  # the way back, above the docs
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/account/tokens/")
    page.fill("input[name=name]", "browser")
    page.click("text=Create a token")
    assert page.locator("#token-secret").inner_text().startswith("qas_")
    assert not violations, violations
    assert not outside, outside
