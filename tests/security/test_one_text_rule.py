"""Issue 27, item 3: one rule of what text may hold, for every way in.  Besides the C0
controls and DEL (tests/test_control_characters*.py), the C1 controls (U+0085 among them),
the line and paragraph separators U+2028 and U+2029, and U+FEFF inside text are refused by
forms, every import kind (questions, flat answers, judgments, layers, runs, archives) and
the API, naming the file, the line and what text may hold instead.  A byte-order mark at
the very start of a file is an encoding marker and is dropped, as before.  A string stored
with one of them before the rule can still be corrected and deleted on its page.

Run on PostgreSQL as well: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_h3 \
.venv/bin/pytest tests/security/test_one_text_rule.py"""

import io
import re
import unicodedata
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotate.imports import ImportRefused, collection_import
from annotate.layer_io import layers_import
from annotate.models import AnswerString, JudgmentEvent, Question
from api.services import api_token_create
from config.text import CONTROL_CHARACTERS as FORM_RULE
from evaluation import services
from evaluation.archive import importing as archive
from evaluation.archive.exporting import collection_export
from evaluation.metrics import InputError
from evaluation.metrics.text_rules import CONTROL_CHARACTERS as FILE_RULE
from evaluation.models import Run
from tests.factories import add_member, make_collection, make_question, make_user
from tests.test_control_characters_in_files import _form_of

pytestmark = pytest.mark.django_db

# the new members of the rule: NEL (a C1 control), another C1 control (CSI), the line and
# paragraph separators, and U+FEFF inside text
CHARACTERS = ["\x85", "\x9b", "\u2028", "\u2029", "\ufeff"]
IDS = [f"U+{ord(c):04X}" for c in CHARACTERS]


def the_rule(char: str) -> bool:
    """The rule as README and text_rules state it, from the Unicode categories."""
    category = unicodedata.category(char)
    return (
        (category == "Cc" and char not in "\t\n\r") or category in ("Zl", "Zp") or char == "\ufeff"
    )


def test_forms_files_and_the_rule_are_one_set():
    everything = [chr(i) for i in range(0x110000)]
    defined = {c for c in everything if the_rule(c)}
    assert {c for c in everything if FILE_RULE.search(c)} == defined
    assert {c for c in everything if FORM_RULE.search(c)} == defined
    assert {"\x00", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff"} <= defined
    # text, not refused: tab and line ends, no-break and ideographic spaces, a
    # right-to-left mark, a zero-width space, emoji
    assert not defined & {"\t", "\n", "\r", "\xa0", "\u3000", "\u200f", "\u200b", "\U0001f600"}


@pytest.fixture
def w():
    c = make_collection(slug="rule", open_for_submissions=True)
    org, ann, bob = make_user(username="org"), make_user(username="ann"), make_user(username="bob")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ann, role="assessor")
    add_member(collection=c, user=bob, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    return c, org, q


def stored():
    return (
        sorted(Question.objects.values_list("qid", "text")),
        sorted(AnswerString.objects.values_list("text", flat=True)),
        Run.objects.count(),
    )


def named_line(issues, filename: str, line: int, char: str):
    assert [(i.file, i.line) for i in issues] == [(filename, line)], issues
    assert f"U+{ord(char):04X}" in issues[0].message
    # and what text may hold instead
    assert "only tab, newline and carriage return" in issues[0].message or (
        "byte-order mark, which may only open a file" in issues[0].message
    )


# kind -> a file whose line 3 holds the character inside a field
FILES = {
    "questions": "question_id,question\nQ2,Who?\nQ3,Wh{c}o?\n",
    "flat": "question_id,answer\nQ1,Lennon\nQ1,Yo{c}ko\n",
    "judgments": "question_id,synset_id,answer,level\nQ1,1,Lennon,S\nQ1,1,Yo{c}ko,S\n",
    "layers": "question_id,synset_id,answer,level,assessor,done\n"
    "Q1,1,Lennon,S,ann,\nQ1,1,Yo{c}ko,S,ann,\n",
}


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
@pytest.mark.parametrize("kind", sorted(FILES))
def test_every_import_kind_refuses_the_character_naming_the_line(w, kind, c):
    coll, org, _ = w
    before = stored()
    data = FILES[kind].format(c=c).encode()
    with pytest.raises(ImportRefused) as e:
        collection_import(collection=coll, kind=kind, data=data, filename="f.csv", by=org)
    named_line(e.value.issues, "f.csv", 3, c)
    assert stored() == before


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
def test_the_layers_page_import_refuses_the_character_naming_the_line(w, c):
    coll, org, _ = w
    before = stored()
    data = FILES["layers"].format(c=c).encode()
    result = layers_import(collection=coll, data=data, filename="l.csv", by=org)
    named_line(result.issues, "l.csv", 3, c)
    assert stored() == before


RUNS = {
    "tsv": "Q1\t1\tLennon\nQ1\t2\tJohn\nQ1\t3\tYo{c}ko\n",
    "csv": "question_id,rank,answer\nQ1,1,Lennon\nQ1,2,Yo{c}ko\n",
    "trec": "Q1 Q0 d1 1 2.0 r\nQ1 Q0 d2 2 1.0 r\nQ1 Q0 d{c}3 3 0.5 r\n",
}


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
@pytest.mark.parametrize("fmt", sorted(RUNS))
def test_a_run_file_refuses_the_character_naming_the_line(w, fmt, c):
    coll, org, _ = w
    before = stored()
    with pytest.raises(InputError) as e:
        services.run_import(
            collection=coll,
            owner=org,
            name="r",
            data=RUNS[fmt].format(c=c).encode(),
            filename="r.tsv",
        )
    named_line(e.value.issues, "r.tsv", 3, c)
    assert stored() == before


def test_a_bom_opening_a_file_is_still_dropped(w):
    """The encoding marker before the first line: every kind reads the file as without it."""
    coll, org, _ = w
    bom = "\ufeff"
    for kind, text in FILES.items():
        data = (bom + text.format(c="")).encode()
        collection_import(collection=coll, kind=kind, data=data, filename="f.csv", by=org)
    assert Question.objects.filter(qid="Q3", text="Who?").exists()
    assert not AnswerString.objects.filter(text__contains=bom).exists()
    for fmt, text in RUNS.items():
        run = services.run_import(
            collection=coll,
            owner=org,
            name=fmt,
            data=(bom + text.format(c="")).encode(),
            filename="r.tsv",
        )
        assert bom not in "".join(run.answers.values_list("question__qid", "text")[0])


def _member_replaced(data: bytes, member: str, old: str, new: str) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in src.namelist():
            body = src.read(name).decode()
            if name == member:
                assert old in body, (member, body[:300])
                body = body.replace(old, new, 1)
            z.writestr(name, body)
    return buf.getvalue()


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
def test_an_archive_refuses_the_character_naming_member_and_line(w, c):
    coll, org, q = w
    q.text = "Who sang?"
    q.save()
    JudgmentEvent.objects.create(collection=coll, user=org, action="note", after={"a": "b"})
    data = collection_export(collection=coll)
    cases = [
        ("questions.csv", "Who sang?", f"Who{c} sang?", "questions.csv:2: holds "),
        ("strings.csv", "Lennon", f"Len{c}non", "strings.csv:2: holds "),
        # escaped in JSON (as the product writes it) or as it is
        ("events.jsonl", '"note"', f'"no\\u{ord(c):04x}te"', "events.jsonl:1: holds "),
        ("events.jsonl", '"note"', f'"no{c}te"', "events.jsonl:1: "),
        ("manifest.json", '"name": "', f'"name": "{c}', "manifest.json: holds "),
    ]
    for member, old, new, where in cases:
        before = stored()
        with pytest.raises(InputError) as e:
            archive.collection_import(data=_member_replaced(data, member, old, new), slug="copy")
        text = str(e.value)
        assert where in text and f"U+{ord(c):04X}" in text, (member, text)
        assert stored() == before


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
def test_the_api_refuses_the_character_in_a_field_or_a_file(w, c):
    coll, org, _ = w
    api = Client(headers={"Authorization": f"Bearer {api_token_create(user=org, name='s').secret}"})
    url = f"/api/collections/{coll.slug}/runs"
    before = stored()
    bad = RUNS["tsv"].format(c=c).encode()
    response = api.post(url, {"name": "r", "file": SimpleUploadedFile("r.tsv", bad)})
    # the file is read by the upload's job (202 with the job), which fails naming the line
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "failed"
    [error] = response.json()["errors"]
    assert (error["file"], error["line"]) == ("r.tsv", 3)
    assert f"U+{ord(c):04X}" in error["message"]
    good = RUNS["tsv"].format(c="").encode()
    response = api.post(url, {"name": f"r{c}", "file": SimpleUploadedFile("r.tsv", good)})
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["message"].startswith("name: holds a control character")
    assert stored() == before


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
def test_a_form_field_with_the_character_is_refused(w, client, c):
    _, org, q = w
    client.force_login(org)
    before = (stored(), q.notes)
    r = client.post(f"/questions/{q.pk}/act/", {"op": "notes", "notes": f"note{c}"})
    assert r.status_code == 400
    assert "control character" in r.content.decode()
    r = client.post(
        f"/questions/{q.pk}/act/", {"op": "type", "text": f"Yo{c}ko", "target": "new", "level": "S"}
    )
    assert r.status_code == 400
    q.refresh_from_db()
    assert (stored(), q.notes) == before


@pytest.mark.parametrize("c", CHARACTERS, ids=IDS)
@pytest.mark.parametrize("op", ["delete", "edit"])
def test_a_stored_string_with_the_character_can_be_saved_or_deleted(w, client, op, c):
    """No field of its page holds the stored text but the text the organizer corrects
    before Save: every other button posts ids and states only."""
    _, org, q = w
    s = AnswerString.objects.create(question=q, text=f"Yo{c}ko", key=f"yo{c}ko")
    client.force_login(org)
    page = client.get(f"/questions/{q.pk}/judge/", {"edit": s.pk})
    assert page.status_code == 200
    holding = [
        m.group(1)
        for m in re.finditer(r'<(?:input|textarea)[^>]*name="([^"]+)"[^>]*>', page.content.decode())
        if c in m.group()
    ]
    assert holding == ["text"]
    action, fields = _form_of(page.content.decode(), op)
    if op == "edit":
        assert fields["text"] == f"Yo{c}ko"
        # saved as it is, the text is refused by the rule (a 400 naming the field) ...
        r = client.post(action, fields)
        assert r.status_code == 400 and "'text'" in r.content.decode().replace("&#x27;", "'")
        assert AnswerString.objects.get(pk=s.pk).text == f"Yo{c}ko"
        fields["text"] = "Yoko"  # ... and saved once the organizer typed it clean
    r = client.post(action, fields)
    assert r.status_code == 302, r.content.decode()[:500]
    if op == "delete":
        assert not AnswerString.objects.filter(pk=s.pk).exists()
    else:
        assert AnswerString.objects.get(pk=s.pk).text == "Yoko"
