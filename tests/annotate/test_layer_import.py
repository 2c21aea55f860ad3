"""The layers CSV is a kind of the main import page: checked whole and previewed
like the other kinds, written all or nothing on confirmation (annotate/import_plans.py
``plan_layers`` over annotate/layer_io.py)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.imports import KINDS, ImportRefused, collection_import, import_plan
from annotate.layer_io import export_layers
from annotate.models import AnswerString, JudgingLayer, JudgmentEvent, LayerJudgment
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
HEADER = b"question_id,synset_id,answer,level,assessor,done\n"
GOOD = HEADER + (
    b"Q1,1,Lennon,S,ann,1\n"
    b"Q1,1,John Lennon,A,ann,1\n"
    b"Q1,,Yoko,,ann,1\n"
    b"Q1,1,Lennon,S,bob,\n"
    b"Q1,2,Yoko,B,bob,\n"
)


@pytest.fixture
def w():
    c = make_collection(slug="li")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon", "Yoko"])
    return {"c": c, "q": q, "org": org, "a": a, "b": b}


def test_layers_is_a_kind_of_the_import_page(client, w):
    assert "layers" in KINDS
    client.force_login(w["org"])
    url = reverse("annotate:collection-import", args=[w["c"].slug])
    page = client.get(url).content.decode()
    assert '<option value="layers">Layers CSV' in page
    r = client.post(url, {"kind": "layers", "file": SimpleUploadedFile("l.csv", GOOD)}, headers=HX)
    html = r.content.decode()
    assert "<html" not in html and "Confirm the import" in html
    assert 'id="preview-layers"' in html and 'id="preview-layer-strings"' in html
    assert "John Lennon" in html  # the string the file adds unjudged
    for name, n in (("layers to create", 2), ("layer judgments", 5), ("layers marked done", 1)):
        assert f'<td>{name}</td><td class="num">{n}</td>' in html, name
    assert not JudgingLayer.objects.exists()  # nothing written before the confirmation
    token = html.split('name="token" value="')[1][:32]
    r = client.post(
        reverse("annotate:collection-import-confirm", args=[w["c"].slug]), {"token": token}
    )
    assert r.status_code == 302
    assert JudgingLayer.objects.filter(question=w["q"]).count() == 2
    assert JudgingLayer.objects.get(assessor=w["a"]).done
    assert not JudgingLayer.objects.get(assessor=w["b"]).done
    assert LayerJudgment.objects.count() == 5
    s = AnswerString.objects.get(text="John Lennon")
    assert s.judged_at is None  # added unjudged; gold is not changed
    assert JudgmentEvent.objects.filter(action="layers_import").count() == 1
    # the export reads back what was imported
    assert export_layers(w["c"]).count("\n") == 6


def test_a_bad_layers_file_lists_every_error_and_writes_nothing(client, w):
    client.force_login(w["org"])
    bad = HEADER + b"Q9,1,x,S,ann,\nQ1,1,Lennon,Z,ann,\nQ1,1,Lennon,S,nobody,\nQ1,a,Yoko,S,bob,\n"
    r = client.post(
        reverse("annotate:collection-import", args=[w["c"].slug]),
        {"kind": "layers", "file": SimpleUploadedFile("bad.csv", bad)},
    )
    html = r.content.decode()
    assert "4 errors, nothing imported" in html
    for line in ("bad.csv:2", "bad.csv:3", "bad.csv:4", "bad.csv:5"):
        assert line in html
    assert not JudgingLayer.objects.exists() and AnswerString.objects.count() == 2


def test_a_layers_import_replaces_the_layers_it_names(w):
    plan = import_plan(collection=w["c"], kind="layers", data=GOOD, filename="l.csv")
    assert plan.ok
    collection_import(collection=w["c"], kind="layers", data=GOOD, filename="l.csv", by=w["org"])
    again = HEADER + b"Q1,,Lennon,,bob,1\nQ1,1,John Lennon,A,bob,1\nQ1,,Yoko,,bob,1\n"
    plan = import_plan(collection=w["c"], kind="layers", data=again, filename="m.csv")
    assert plan.counts["layers to replace"] == 1 and plan.counts["layers to create"] == 0
    collection_import(collection=w["c"], kind="layers", data=again, filename="m.csv", by=w["org"])
    bob = JudgingLayer.objects.get(assessor=w["b"])
    assert list(bob.judgments.order_by("string__text").values_list("group", flat=True)) == [
        1,
        None,
        None,
    ]
    assert bob.done
    assert JudgingLayer.objects.get(assessor=w["a"]).judgments.count() == 3  # not named: kept
    # both layers are now done: the agreement step ran, as on the judging page -- both
    # judged Yoko incorrect (to gold); Lennon and John Lennon wait for adjudication
    gold = {s.text: s for s in AnswerString.objects.filter(question=w["q"])}
    assert gold["Yoko"].judged_at is not None and gold["Yoko"].synset_id is None
    assert gold["Lennon"].judged_at is None and gold["John Lennon"].judged_at is None
    assert JudgmentEvent.objects.filter(action="layers_agree").count() == 1
    with pytest.raises(ImportRefused):
        collection_import(
            collection=w["c"], kind="layers", data=HEADER + b"Q1,1,x,S,zed,\n", filename="z.csv"
        )
    assert JudgingLayer.objects.count() == 2


def test_a_layer_marked_done_must_judge_every_string_of_its_question(w):
    """As ``layer_mark_done`` on the page: a file cannot mark done a layer that leaves
    strings unjudged (nothing would ever send the question on to gold)."""
    partial = HEADER + b"Q1,1,Lennon,S,bob,1\n"
    plan = import_plan(collection=w["c"], kind="layers", data=partial, filename="p.csv")
    assert not plan.ok
    [issue] = plan.issues
    assert issue.line == 2 and "bob's layer of Q1 is marked done" in issue.message
    assert "1 string(s) of the question unjudged" in issue.message
    with pytest.raises(ImportRefused):
        collection_import(collection=w["c"], kind="layers", data=partial, filename="p.csv")
    assert not JudgingLayer.objects.exists()


def test_a_layers_file_chosen_as_judgments_is_refused_with_the_right_kind(client, w):
    """Its rows are several assessors' judgments of one string: as a judgments file they
    would be refused as contradicting each other (or, agreeing, written to gold)."""
    plan = import_plan(collection=w["c"], kind="judgments", data=GOOD, filename="l.csv")
    [issue] = plan.issues
    assert issue.line == 1
    assert issue.message == (
        "this is a layers CSV (it has the columns assessor and done): choose the kind Layers CSV"
    )
    # agreeing rows too (nothing to contradict), with a byte order mark and a blank line
    same = b"\xef\xbb\xbf\n" + HEADER.upper() + b"Q1,1,Lennon,S,ann,1\nQ1,1,Lennon,S,bob,1\n"
    [issue] = import_plan(collection=w["c"], kind="judgments", data=same, filename="s.csv").issues
    assert issue.line == 2 and "choose the kind Layers CSV" in issue.message
    client.force_login(w["org"])
    r = client.post(
        reverse("annotate:collection-import", args=[w["c"].slug]),
        {"kind": "judgments", "file": SimpleUploadedFile("l.csv", same)},
    )
    assert "choose the kind Layers CSV" in r.content.decode()
    assert not AnswerString.objects.filter(judged_at__isnull=False).exists()
    assert not JudgingLayer.objects.exists()
    # the judgments export's informative assessor column (no done column) is still fine
    export = b"question_id,synset_id,answer,level,question,assessor,updated\nQ1,1,Lennon,S,?,ann,\n"
    assert import_plan(collection=w["c"], kind="judgments", data=export, filename="j.csv").ok


# -- the done column and the encoding (red team 13) ----------------------------------------
def _issues(w, data: bytes) -> list[str]:
    from annotate.layer_io import layers_import

    result = layers_import(collection=w["c"], data=data, filename="l.csv", by=w["org"])
    return [str(i) for i in result.issues]


@pytest.mark.parametrize(
    ("value", "done"),
    [
        ("1", True),
        ("TRUE", True),
        ("Yes", True),
        ("true", True),
        ("0", False),
        ("False", False),
        ("NO", False),
        ("", False),
        (" yes ", True),
    ],
)
def test_the_done_column_reads_the_usual_spellings(w, value, done):
    """``TRUE`` (a spreadsheet's spelling) meant "not done" without a word."""
    data = HEADER + f"Q1,1,Lennon,S,ann,{value}\nQ1,,Yoko,,ann,{value}\n".encode()
    assert _issues(w, data) == []
    assert JudgingLayer.objects.get(question=w["q"], assessor=w["a"]).done is done


@pytest.mark.parametrize("value", ["2", "done", "y", "-", "oui"])
def test_any_other_done_value_is_refused_with_its_line(w, value):
    data = HEADER + f"Q1,1,Lennon,S,ann,\nQ1,,Yoko,,ann,{value}\n".encode()
    assert _issues(w, data) == [
        f"l.csv:3: done {value!r}: 1, true or yes for a layer marked done; 0, false, no or "
        "empty for one still open"
    ]
    assert not JudgingLayer.objects.exists()


def test_one_layer_with_two_done_values_is_refused_naming_both_lines(w):
    data = HEADER + b"Q1,1,Lennon,S,ann,\nQ1,1,Lennon,S,bob,1\nQ1,,Yoko,,ann,1\n"
    assert _issues(w, data) == [
        "l.csv:4: ann's layer of Q1 is marked done here but not done on line 2: one value "
        "of done for all rows of a layer"
    ]
    assert not JudgingLayer.objects.exists()


def test_a_file_not_in_utf8_is_refused_with_the_line_of_the_first_bad_byte(w):
    data = HEADER + "Q1,1,Lennon,S,ann,\nQ1,1,Lennon é,S,bob,\n".encode("latin-1")
    assert _issues(w, data) == ["l.csv:3: not UTF-8 text: byte 0xe9 (save the file as UTF-8)"]
    # after a byte-order mark too
    assert _issues(w, b"\xef\xbb\xbf" + data)[0].startswith("l.csv:3: not UTF-8")
    assert not JudgingLayer.objects.exists()
