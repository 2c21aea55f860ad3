"""The API examples of the README and docs/api.md run against any `make demo`: the demo's
runs get new ids each time, so no example may name a run by a fixed id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db  # the package's autouse fixture clears the cache table


def _shell_blocks(path: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    if path == "README.md":
        text = text[text.index("## REST API") : text.index("## Scoring from the command line")]
    return "\n".join(re.findall(r"^```sh\n(.*?)^```$", text, re.MULTILINE | re.DOTALL))


@pytest.mark.parametrize("path", ["README.md", "docs/api.md"])
def test_api_examples_look_run_ids_up_by_name(path):
    blocks = _shell_blocks(path)
    assert "/runs" in blocks
    fixed = re.findall(r"runs/\d+|[?&][ab]=\d+|\"id\": \d+", blocks)
    assert not fixed, f"{path}: fixed run ids {fixed}"
    assert 'r["name"] ==' in blocks  # looked up in GET .../runs
