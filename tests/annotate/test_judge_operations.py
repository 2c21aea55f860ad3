"""The judging operations table: every operation the workspace sends has a form and a
service call, and a post its form refuses changes nothing and says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotate.models import JudgmentEvent, Role
from annotate.operations import OPERATIONS
from tests.factories import add_member, make_collection, make_question, make_user

ROOT = Path(__file__).resolve().parents[2]
HX = {"HX-Request": "true"}


def test_every_operation_the_page_sends_is_in_the_table():
    template = (ROOT / "templates/annotate/question_judge.html").read_text(encoding="utf-8")
    tags = (ROOT / "annotate/templatetags/workspace.py").read_text(encoding="utf-8")
    script = (ROOT / "static/js/judge.js").read_text(encoding="utf-8")
    sent = set(re.findall(r'name="op" value="(\w+)"', template + tags))
    sent |= set(re.findall(r'op: "(\w+)"', script))
    assert {"add", "new", "incorrect", "merge", "split", "type", "done", "undo"} <= sent
    assert sent <= set(OPERATIONS)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "post, says",
    [
        ({"op": "split"}, "Tick the strings to split out first."),
        ({"op": "add", "ordinal": "0"}, "No answer string chosen."),
        ({"op": "add", "string": "1", "ordinal": "x"}, "There is no synset x."),
        (
            {"op": "add", "string": "1", "ordinal": "3", "page_synsets": "7"},
            "There is no synset 3 on your page",
        ),
        ({"op": "type", "text": "   "}, "Type an answer string first."),
        ({"op": "jump"}, "Unknown operation"),
    ],
)
def test_a_refused_post_changes_nothing_and_says_why(client, post, says):
    c = make_collection()
    q = make_question(collection=c, synsets=[[("Paris", "S")]], unjudged=["Lyon"])
    user = make_user()
    add_member(collection=c, user=user, role=Role.ORGANIZER)
    client.force_login(user)
    r = client.post(f"/questions/{q.pk}/act/", post, headers=HX)
    html = r.content.decode()
    assert r.status_code == 200 and 'id="workspace"' in html and says in html
    assert not JudgmentEvent.objects.filter(question=q).exists()
    q.refresh_from_db()
    assert q.version == 0
