"""The pages' language (issue 25): the browser's Accept-Language, else English; the menu's
switcher keeps a person's choice (their preference, their session, the language cookie),
which follows them to their next log-in on another browser."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotate.language import SESSION_KEY, user_language
from annotate.models import UserPreference
from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db

SWITCH = "/language/"


@pytest.fixture
def assessor():
    user = make_user(username="lang-assessor", password="pw-lang-123456")
    add_member(collection=make_collection(slug="lang-c"), user=user, role="assessor")
    return user


def _menu(html: str) -> str:
    return re.search(r'<nav class="mainnav".*?</nav>', html, re.S).group(0)


def test_english_without_a_choice(client, assessor):
    client.force_login(assessor)
    response = client.get("/collections/")
    html = response.content.decode()
    assert '<html lang="en">' in html and ">Collections</a>" in _menu(html)
    assert response["Content-Language"] == "en"


def test_the_browsers_language_when_the_person_chose_none(client, assessor):
    client.force_login(assessor)
    response = client.get("/collections/", headers={"accept-language": "ja,en;q=0.5"})
    html = response.content.decode()
    assert '<html lang="ja">' in html and response["Content-Language"] == "ja"
    menu = _menu(html)
    assert "コレクション" in menu and "自分の担当" in menu and "Collections" not in menu
    assert "ログアウト" in html
    # a language the pages are not translated into: English
    response = client.get("/collections/", headers={"accept-language": "de"})
    assert response["Content-Language"] == "en"


def test_the_switcher_keeps_the_choice_for_the_next_log_in(client, assessor):
    client.force_login(assessor)
    response = client.post(SWITCH, {"language": "ja", "next": "/queue/"})
    assert response.status_code == 302 and response["Location"] == "/queue/"
    assert response.cookies["django_language"].value == "ja"
    assert user_language(assessor) == "ja"
    # the choice beats the browser's
    page = client.get("/collections/", headers={"accept-language": "en"})
    assert page["Content-Language"] == "ja"
    # another browser: no cookie, an English browser; the log-in brings the choice
    other = Client()
    assert other.login(username="lang-assessor", password="pw-lang-123456")
    assert other.session[SESSION_KEY] == "ja"
    page = other.get("/collections/", headers={"accept-language": "en"})
    assert page["Content-Language"] == "ja" and "コレクション" in page.content.decode()
    # back to the browser's language
    client.post(SWITCH, {"language": "", "next": "/collections/"})
    assert user_language(assessor) == ""
    page = client.get("/collections/", headers={"accept-language": "en"})
    assert page["Content-Language"] == "en"


def test_the_switcher_refuses_a_foreign_next_and_an_unknown_language(client, assessor):
    client.force_login(assessor)
    response = client.post(SWITCH, {"language": "xx", "next": "https://evil.example/"})
    assert response["Location"] == "/"
    assert UserPreference.objects.get(user=assessor).language == ""


def test_the_switcher_needs_post_and_works_before_log_in(client):
    assert client.get(SWITCH).status_code == 405
    response = client.post(SWITCH, {"language": "ja", "next": "/accounts/login/"})
    assert response["Location"] == "/accounts/login/"
    html = client.get("/accounts/login/").content.decode()
    assert '<html lang="ja">' in html and 'name="language" value="ja"' in html
    assert not UserPreference.objects.exists()


def test_the_switcher_shows_each_language_in_its_own_name(client, assessor):
    client.force_login(assessor)
    html = client.get("/collections/", headers={"accept-language": "ja"}).content.decode()
    switch = re.search(r'<form class="langswitch".*?</form>', html, re.S).group(0)
    assert 'lang="en" aria-pressed="false">English</button>' in switch
    assert 'lang="ja" aria-pressed="true">日本語</button>' in switch
    assert 'name="next" value="/collections/"' in switch


def test_a_pages_language_ends_with_its_request(client, assessor):
    """LocaleMiddleware activates the browser's language for the thread; a service called
    after the request (a command, a job run here, a test) must not speak it."""
    from django.utils import translation
    from django.utils.translation import gettext

    before = translation.get_language()
    client.force_login(assessor)
    client.post(SWITCH, {"language": "ja", "next": "/collections/"})
    client.get("/collections/", headers={"accept-language": "ja"})
    assert translation.get_language() == before
    assert gettext("Log out") == "Log out"
