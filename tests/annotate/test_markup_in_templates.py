"""Markup lives in templates: no module of the annotate app marks strings safe, builds HTML
tags in f-strings or writes the CSRF input itself.  The one exception, the workspace's
string rows, is formatted by ``format_html_join`` in ``annotate/templatetags``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (ROOT / "annotate").rglob("*.py") if "migrations" not in p.parts)
TAG = re.compile(r"<\s*/?[a-zA-Z][\w-]*[\s>/]")


def html_fstrings(source: str) -> list[int]:
    """Lines of the f-strings in ``source`` whose literal text holds an HTML tag."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.JoinedStr)
        and any(
            isinstance(part, ast.Constant) and TAG.search(str(part.value)) for part in node.values
        )
    ]


def test_the_checks_catch_what_they_look_for():
    assert html_fstrings("x = f'<li class=\"a\">{y}</li>'\n") == [1]
    assert html_fstrings("x = f'{a} < {b}'\nz = f'{n} strings'\n") == []
    assert MODULES and any(p.name == "views.py" for p in MODULES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_html_built_in_python(path):
    source = path.read_text(encoding="utf-8")
    assert "mark_safe(" not in source, "mark_safe: put the markup in a template"
    assert html_fstrings(source) == [], "an f-string builds HTML: put it in a template"
    assert "csrfmiddlewaretoken" not in source and "get_token(" not in source, (
        "the CSRF input comes from {% csrf_token %}"
    )
    if "templatetags" not in path.parts:
        assert "format_html" not in source, "format_html outside the template tags"


def test_judging_page_takes_its_csrf_input_from_the_tag():
    template = (ROOT / "templates/annotate/question_judge.html").read_text(encoding="utf-8")
    assert "{% csrf_token %}" in template and "csrf_input" not in template
    assert "{% partialdef synset-card %}" in template and "{% partialdef workspace" in template
    tags = (ROOT / "annotate/templatetags/workspace.py").read_text(encoding="utf-8")
    assert "csrf_input(context.request)" in tags  # Django's own, for the candidates' forms
