import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_through_the_real_page_shows_collections(page, live_server, demo, artifacts):
    page.goto(f"{live_server.url}/collections/")
    assert "/accounts/login/" in page.url  # every page needs login
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    assert page.locator("h1").inner_text() == "Collections"
    assert page.get_by_role("link", name="QAC demo (Sakai 2004 examples)").is_visible()
    page.screenshot(path=str(artifacts / "collections.png"), full_page=True)


def test_wrong_password_is_refused(page, live_server, demo):
    login(page, live_server, "organizer", "wrong")
    assert page.get_by_role("alert").is_visible()
    assert "/accounts/login/" in page.url
