"""Base template and static files: htmx vendored (no CDN), CSRF header on htmx requests,
partials as a template builtin."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template import engines

from tests.factories import make_user

ROOT = Path(settings.BASE_DIR)


def test_partialdef_needs_no_load_tag():
    template = engines["django"].from_string(
        "{% partialdef greeting inline %}Hello {{ name }}{% endpartialdef %}|{% partial greeting %}"
    )
    assert template.render({"name": "Ringo"}) == "Hello Ringo|Hello Ringo"


def test_htmx_is_vendored_with_its_version_in_the_name():
    vendored = list((ROOT / "static" / "vendor").glob("htmx-2.*.min.js"))
    assert len(vendored) == 1
    assert vendored[0].stat().st_size > 10_000


def test_nothing_loads_from_a_cdn():
    pattern = re.compile(r"""(src|href)\s*=\s*["'](https?:)?//""")
    files = [
        p
        for folder in ("templates", "static/css")
        for p in (ROOT / folder).rglob("*")
        if p.is_file()
    ]
    assert ROOT / "templates" / "base.html" in files and any(p.suffix == ".css" for p in files)
    offenders = [
        str(p.relative_to(ROOT)) for p in files if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_every_data_table_scrolls_in_a_labelled_box():
    """A table wider than a phone scrolls inside its own box (static/css/app.css,
    .table-scroll), which a keyboard can focus and a screen reader names; the browser test
    tests/browser/test_tables_phone.py checks the result at 390 px."""
    box = re.compile(
        # the label is text or a {% translate %} tag
        r'<div class="table-scroll[^"]*" tabindex="0" role="region" '
        r'aria-label="(?:[^"{]|{%[^%]*%}|{{[^}]*}})+">\s*$'
    )
    tables = unboxed = 0
    for path in (ROOT / "templates").rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        for m in re.finditer(r"<table\b", html):
            tables += 1
            if not box.search(html[: m.start()]):
                unboxed += 1
                print(f"{path.relative_to(ROOT)}: a <table> outside a .table-scroll box")
    assert tables > 30 and unboxed == 0


@pytest.mark.django_db
def test_base_page_sends_csrf_with_htmx_and_has_the_navigation(client):
    # an organizer of some collection: every entry of the menu is theirs to use
    # (tests/test_navigation.py checks what each role sees)
    from tests.factories import add_member, make_collection

    user = make_user()
    add_member(collection=make_collection(), user=user, role="organizer")
    client.force_login(user)
    html = client.get("/collections/").content.decode()
    token = re.search(r"""hx-headers='\{"X-CSRFToken": "([^"]+)"\}'""", html)
    assert token and len(token.group(1)) >= 32
    assert re.search(r'<script src="/static/vendor/htmx-2\.[\d.]+\.min\.js"', html)
    for href, label in [
        ("/collections/", "Collections"),
        ("/queue/", "My queue"),
        ("/runs/", "Runs"),
    ]:
        assert f'<a href="{href}"' in html and label in html


@pytest.mark.django_db
def test_an_htmx_post_with_the_page_token_passes_csrf(client):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    user = make_user(password="pw-secret-1")
    strict.force_login(user)
    html = strict.get("/collections/").content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', html).group(1)
    # logout is a POST view: refused without the header, accepted with it
    assert strict.post("/accounts/logout/").status_code == 403
    r = strict.post("/accounts/logout/", headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert r.status_code == 302
