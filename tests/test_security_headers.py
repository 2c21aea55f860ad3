"""Security headers on every page: CSP allowing only our own static files, nosniff,
referrer policy, no framing."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url", ["/accounts/login/", "/collections/", "/collections/demo/", "/collections/demo/runs/"]
)
def test_headers(client, demo, url):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="organizer"))
    r = client.get(url)
    assert r.status_code == 200, url  # the headers of the page itself, not of an error page
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Referrer-Policy"] == "same-origin"
    assert r.headers["X-Frame-Options"] == "DENY"


def test_no_inline_scripts_or_style_attributes_in_templates():
    """CSP forbids inline code: templates load scripts from static files only."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "templates"
    offenders = []
    templates = list(root.rglob("*.html"))
    assert len(templates) >= 10 and root / "base.html" in templates  # the scan saw them
    for path in templates:
        text = path.read_text()
        for m in re.finditer(r"<script(?![^>]*\bsrc=)[^>]*>", text):
            if 'type="application/json"' not in m.group(0):
                offenders.append(f"{path.name}: {m.group(0)}")
        offenders += [f"{path.name}: style attribute" for _ in re.finditer(r"\sstyle=\"", text)]
        offenders += [
            f"{path.name}: inline handler"
            for _ in re.finditer(r"\son(click|load|error|submit|change|key\w*)=", text)
        ]
    assert not offenders
