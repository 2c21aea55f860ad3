"""Issue 27: a character the forms refuse (``config.text.CONTROL_CHARACTERS``: every C0
control but tab, newline and carriage return, and DEL) a file cannot bring in either.  Run
files and every import kind are refused naming the file, the line and the character; a
string stored with one before the rule can still be deleted and corrected on its page."""

import html
import re

import pytest

from annotate.imports import ImportRefused, collection_import
from annotate.layer_io import layers_import
from annotate.models import AnswerString, Question
from config.text import CONTROL_CHARACTERS as FORM_RULE
from evaluation import services
from evaluation.metrics import InputError
from evaluation.metrics.text_rules import CONTROL_CHARACTERS
from evaluation.models import Run
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

CHARACTERS = ["\x1b", "\x01", "\x7f", "\x0b", "\x0c"]

# kind -> a file whose line 3 holds the character (inside the answer or the question)
FILES = {
    "questions": "question_id,question\nQ2,Who?\nQ3,Wh{c}o?\n",
    "flat": "question_id,answer\nQ1,Lennon\nQ1,Yo{c}ko\n",
    "judgments": "question_id,synset_id,answer,level\nQ1,1,Lennon,S\nQ1,1,Yo{c}ko,S\n",
}
LAYERS = (
    "question_id,synset_id,answer,level,assessor,done\nQ1,1,Lennon,S,ann,\nQ1,1,Yo{c}ko,S,ann,\n"
)


def test_files_and_forms_refuse_the_same_characters():
    refused = {chr(i) for i in range(0x110000) if CONTROL_CHARACTERS.search(chr(i))}
    assert refused == {chr(i) for i in range(0x110000) if FORM_RULE.search(chr(i))}
    assert "\t" not in refused and "\n" not in refused and "\r" not in refused


@pytest.fixture
def w():
    c = make_collection(slug="ctl")
    org, ann = make_user(username="org"), make_user(username="ann")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ann, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    return c, org, q


def stored():
    return (
        list(Question.objects.values_list("qid", "text")),
        list(AnswerString.objects.values_list("text", flat=True)),
        Run.objects.count(),
    )


def named(issues, filename, c):
    assert [(i.file, i.line) for i in issues] == [(filename, 3)], issues
    assert f"U+{ord(c):04X}" in issues[0].message


@pytest.mark.parametrize("c", CHARACTERS)
@pytest.mark.parametrize("kind", sorted(FILES))
def test_every_import_kind_refuses_the_character_naming_the_line(w, kind, c):
    coll, org, _ = w
    before = stored()
    data = FILES[kind].format(c=c).encode()
    with pytest.raises(ImportRefused) as e:
        collection_import(collection=coll, kind=kind, data=data, filename="f.csv", by=org)
    named(e.value.issues, "f.csv", c)
    assert stored() == before


@pytest.mark.parametrize("c", CHARACTERS)
def test_the_layers_file_refuses_the_character_naming_the_line(w, c):
    coll, org, _ = w
    before = stored()
    result = layers_import(
        collection=coll, data=LAYERS.format(c=c).encode(), filename="l.csv", by=org
    )
    named(result.issues, "l.csv", c)
    assert stored() == before


@pytest.mark.parametrize("c", CHARACTERS)
@pytest.mark.parametrize(
    "run",
    [
        "Q1\t1\tLennon\nQ1\t2\tJohn\nQ1\t3\tYo{c}ko\n",
        "question_id,rank,answer\nQ1,1,Lennon\nQ1,2,Yo{c}ko\n",
        "Q1 Q0 d1 1 2.0 r\nQ1 Q0 d2 2 1.0 r\nQ1 Q0 d{c}3 3 0.5 r\n",
    ],
    ids=["tsv", "csv", "trec"],
)
def test_a_run_file_refuses_the_character_naming_the_line(w, run, c):
    coll, org, _ = w
    before = stored()
    data = run.format(c=c).encode()
    with pytest.raises(
        InputError, match=re.escape(f"r.tsv:3: contains the control character U+{ord(c):04X}")
    ):
        services.run_import(collection=coll, owner=org, name="r", data=data, filename="r.tsv")
    assert stored() == before


def test_a_bom_tabs_and_line_ends_stay_text(w):
    coll, org, _ = w
    data = "\ufeffQ1\t1\tLennon\r\nQ1\t2\tYoko\n".encode()
    run = services.run_import(collection=coll, owner=org, name="ok", data=data, filename="ok.tsv")
    assert Run.objects.filter(pk=run.pk).exists()


def _form_of(page: str, button: str) -> tuple[str, dict[str, str]]:
    """The action and fields a browser would send pressing the button ``button``."""
    target = re.search(rf'<button[^>]*value="{button}"[^>]*>', page).group()
    form_id = re.search(r'form="([^"]+)"', target)
    if form_id:
        form = re.search(rf'<form[^>]*id="{form_id.group(1)}".*?</form>', page, re.S).group()
    else:
        form = next(f for f in re.findall(r"<form.*?</form>", page, re.S) if target in f)
    fields = {
        m.group(1): html.unescape(m.group(2))
        for m in re.finditer(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', form)
    }
    fields["op"] = button
    return re.search(r'action="([^"]+)"', form).group(1), fields


@pytest.mark.parametrize("op", ["delete", "edit"])
def test_a_stored_string_with_esc_can_be_deleted_or_corrected_on_its_page(w, client, op):
    _, org, q = w
    s = AnswerString.objects.create(question=q, text="Yo\x1bko", key="yo ko")
    client.force_login(org)
    page = client.get(f"/questions/{q.pk}/judge/", {"edit": s.pk})
    assert page.status_code == 200
    action, fields = _form_of(page.content.decode(), op)
    if op == "edit":
        assert fields["text"] == "Yo\x1bko"
        fields["text"] = "Yoko"  # the organizer types the text clean
    r = client.post(action, fields)
    assert r.status_code == 302, r.content.decode()[:500]
    if op == "delete":
        assert not AnswerString.objects.filter(pk=s.pk).exists()
    else:
        assert AnswerString.objects.get(pk=s.pk).text == "Yoko"
