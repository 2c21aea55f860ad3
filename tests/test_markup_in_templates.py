"""Markup lives in templates: no Python module of any app (annotate, evaluation, api,
config) marks strings safe, builds HTML or SVG tags in f-strings or writes the CSRF input
itself, so escaping is always the template's.  The exceptions, markup repeated thousands of
times a page, are formatted by ``format_html_join`` (which escapes every value) in two
template tag modules: the workspace's string rows (``annotate/templatetags/workspace.py``)
and the difference plot's marks and columns (``evaluation/templatetags/plot_svg.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotate", "evaluation", "api", "config", "jobs")
MODULES = sorted(
    p for app in APPS for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts
)
FORMAT_HTML_HOMES = (
    ROOT / "annotate" / "templatetags" / "workspace.py",
    ROOT / "evaluation" / "templatetags" / "plot_svg.py",
)
# an HTML or SVG tag; an all-capitals placeholder such as <TAB> in a message is none
TAG = re.compile(r"<\s*/?(?![A-Z_]+>)[a-zA-Z][\w-]*[\s>/]")


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
    assert html_fstrings("x = f'<td>{v}</td>'\n") == [1]
    assert html_fstrings('x = F"  <svg>"\n') == [1]
    assert html_fstrings("x = f'{a} < {b}'\nz = f'{n} strings'\ny = f'{v:.4f}'\n") == []
    assert html_fstrings("y = '<td>'\n") == []  # a plain string is no f-string
    assert html_fstrings("m = f'question_id<TAB>rank, found {n}'\n") == []
    names = {p.relative_to(ROOT).as_posix() for p in MODULES}
    for app in APPS:
        assert any(name.startswith(f"{app}/") for name in names), app
    assert "annotate/views.py" in names and "config/middleware.py" in names
    assert all(home in MODULES for home in FORMAT_HTML_HOMES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_html_built_in_python(path):
    source = path.read_text(encoding="utf-8")
    assert "mark_safe" not in source, "mark_safe: put the markup in a template"
    assert html_fstrings(source) == [], "an f-string builds HTML: put it in a template"
    assert "csrfmiddlewaretoken" not in source and "get_token(" not in source, (
        "the CSRF input comes from {% csrf_token %}"
    )
    if path not in FORMAT_HTML_HOMES:
        assert "format_html" not in source, "format_html outside annotate/templatetags"


def test_judging_page_takes_its_csrf_input_from_the_tag():
    template = (ROOT / "templates/annotate/question_judge.html").read_text(encoding="utf-8")
    assert "{% csrf_token %}" in template and "csrf_input" not in template
    assert "{% partialdef synset-card %}" in template and "{% partialdef workspace" in template
    tags = FORMAT_HTML_HOMES[0].read_text(encoding="utf-8")
    assert "csrf_input(context.request)" in tags  # Django's own, for the candidates' forms
