"""A stuck or unreachable database answers 503, static files never need it, over-size
bodies are refused before they are read, and spooled uploads of dead workers are deleted."""

import os
import re
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.test import Client

from config.errors import server_error
from config.uploads import _HOST, clean_upload_dir
from tests.factories import add_member, make_collection, make_user

ROOT = Path(__file__).resolve().parents[1]


class Unreadable:
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the request body was read")

    readline = read


def test_the_error_handler_answers_503_for_a_database_timeout(rf):
    try:
        raise OperationalError("canceling statement due to statement timeout")
    except OperationalError:
        response = server_error(rf.get("/"))
    assert response.status_code == 503
    assert response["Retry-After"]
    assert "did not answer in time" in response.content.decode()
    try:
        raise ValueError("a bug")
    except ValueError:
        assert server_error(rf.get("/")).status_code == 500


def test_the_500_page_is_in_the_site_layout_without_the_database(rf):
    """No database here (no django_db mark): the page must render without it."""
    try:
        raise ValueError("a bug")
    except ValueError:
        response = server_error(rf.get("/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert '<header class="topbar">' in page and 'class="brand"' in page
    assert 'id="mainnav"' in page and ">Collections</a>" in page and ">My queue</a>" in page
    assert 'href="/static/css/app.css"' in page and "js/nav.js" in page
    assert re.search(r"<h1>Server error</h1>", page)
    assert '<a href="/collections/">back to your collections</a>' in page
    assert 'class="sitefooter"' in page
    # the 503 page shares the layout
    try:
        raise OperationalError("canceling statement due to statement timeout")
    except OperationalError:
        busy = server_error(rf.get("/")).content.decode()
    assert '<header class="topbar">' in busy and 'id="mainnav"' in busy and "app.css" in busy


@pytest.mark.django_db
def test_a_database_error_anywhere_in_a_request_is_a_503_page(monkeypatch):
    from django.contrib.sessions.backends.db import SessionStore

    user = make_user()
    client = Client(raise_request_exception=False)
    client.force_login(user)

    def stuck(self):
        raise OperationalError("canceling statement due to lock timeout")

    monkeypatch.setattr(SessionStore, "load", stuck)
    response = client.get("/collections/")
    assert response.status_code == 503
    assert "try again" in response.content.decode()


@pytest.mark.django_db
def test_static_files_are_served_without_sessions_or_the_database(
    settings, monkeypatch, django_assert_num_queries
):
    from django.contrib.auth.middleware import AuthenticationMiddleware
    from django.contrib.sessions.middleware import SessionMiddleware

    settings.WHITENOISE_USE_FINDERS = True

    def unreachable(*args, **kwargs):
        raise AssertionError("reached a middleware that touches the database")

    monkeypatch.setattr(SessionMiddleware, "process_request", unreachable)
    monkeypatch.setattr(AuthenticationMiddleware, "process_request", unreachable)
    client = Client(raise_request_exception=True)
    with django_assert_num_queries(0):
        response = client.get("/static/css/app.css")
        assert response.status_code == 200
        assert b"{" in b"".join(response.streaming_content)  # the stylesheet itself
    response.close()


@pytest.mark.django_db
def test_an_over_size_body_is_refused_before_it_is_read(settings):
    """Anonymous, without a CSRF token: still 413, and the body is never read or spooled."""
    c = make_collection(slug="big-body")
    too_big = settings.MAX_REQUEST_BODY_BYTES + 1
    client = Client(enforce_csrf_checks=True, raise_request_exception=True)
    for path in ("/collections/big-body/runs/upload/", "/accounts/login/"):
        response = client.generic(
            "POST",
            path,
            b"",
            CONTENT_LENGTH=str(too_big),
            CONTENT_TYPE="multipart/form-data; boundary=xyz",
            **{"wsgi.input": Unreadable()},
        )
        assert response.status_code == 413, path
        assert "at most" in response.content.decode()
    assert c.pk  # nothing else happened


def test_the_body_limit_follows_the_upload_limits(settings):
    assert (
        settings.MAX_REQUEST_BODY_BYTES
        >= max(settings.RUN_UPLOAD_MAX_MB, settings.IMPORT_MAX_MB) * 1024 * 1024
    )


@pytest.mark.django_db
def test_uploads_dead_workers_left_behind_are_deleted(client, settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploads")
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10  # spool even this small run
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    dead_pid = 2**22 + 12345  # above pid_max's default: no such process
    dead = folder / f"{_HOST}~{dead_pid}~abc.upload.tsv"
    old = folder / "someone-else.upload"
    running = folder / f"other-host~{os.getpid()}~x.upload"
    mine = folder / f"{_HOST}~{os.getpid()}~y.upload"
    for p in (dead, old, running, mine):
        p.write_bytes(b"x" * 1000)
    hour_ago = time.time() - 2 * 3600
    os.utime(old, (hour_ago, hour_ago))
    c = make_collection(slug="spool")
    user = make_user()
    add_member(collection=c, user=user, role="organizer")
    client.force_login(user)
    client.post(
        "/collections/spool/runs/upload/",
        {"name": "r", "file": SimpleUploadedFile("r.tsv", b"Q1\t1\tx\n" * 10)},
    )
    assert sorted(p.name for p in folder.iterdir()) == sorted([running.name, mine.name])


def test_upload_dir_is_in_the_project_and_cleaned_at_start_up(settings, tmp_path):
    from django.conf import global_settings

    assert settings.FILE_UPLOAD_TEMP_DIR != global_settings.FILE_UPLOAD_TEMP_DIR
    assert Path(settings.FILE_UPLOAD_TEMP_DIR).is_relative_to(ROOT) or os.environ.get(
        "DJANGO_UPLOAD_TEMP_DIR"
    )
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "new")
    assert clean_upload_dir() == 0 and (tmp_path / "new").is_dir()
    assert "clean_upload_dir()" in (ROOT / "config" / "wsgi.py").read_text()
