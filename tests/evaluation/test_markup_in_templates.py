"""Markup lives in templates: no Python module of the evaluation app builds HTML or SVG
(no ``mark_safe``, no f-string that starts a tag), so escaping is always the template's."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "evaluation"
MODULES = sorted(p for p in APP.rglob("*.py") if "migrations" not in p.parts)
_FSTRING = re.compile(r"^[rRbB]*[fF][rRbB]*(?:'''|\"\"\"|'|\")\s*<")


def markup_built_in(source: str) -> list[str]:
    """Lines of ``source`` that call mark_safe or open an f-string with a tag."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string == "mark_safe":
            found.append(f"{tok.start[0]}: mark_safe")
        elif tok.type == tokenize.STRING and _FSTRING.match(tok.string):
            found.append(f"{tok.start[0]}: {tok.string[:40]}")
        elif tok.type == getattr(tokenize, "FSTRING_START", None):  # Python 3.12+
            line = tok.line[tok.start[1] :]
            if _FSTRING.match(line):
                found.append(f"{tok.start[0]}: {line[:40]}")
    return found


def test_the_checker_finds_built_markup():
    assert markup_built_in("x = f'<td>{v}</td>'\n")
    assert markup_built_in('x = F"  <svg>"\n')
    assert markup_built_in("from django.utils.safestring import mark_safe\n")
    assert not markup_built_in("x = f'{v:.4f}'\ny = '<td>'\n")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(APP.parent)))
def test_no_module_of_the_app_builds_markup(path):
    assert MODULES, "no modules found"
    assert markup_built_in(path.read_text(encoding="utf-8")) == []
