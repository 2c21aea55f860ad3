"""Real judgment files: spellings with one matching key fold into one
string with variants, disagreeing rows are refused naming both lines, the file's synset
ids are kept as labels and written back, and the export round-trips every spelling."""

import csv
import io

import pytest

from annotate.exports import export_judgments
from annotate.imports import collection_import, import_plan
from annotate.models import AnswerString, AnswerSynset, Question
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics.judgment_parsers import parse_judgments_csv
from evaluation.services import collection_judgments, score_runs
from tests.factories import make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

HEADER = "question_id,synset_id,answer,level\n"

# a file as a real human study writes it: several spellings of one answer, same judgment
STUDY = (
    HEADER
    + "Q1,gold,Richard Nixon,S\n"  # 2
    + "Q1,Q1-b,Nixon,A\n"  # 3
    + "Q1,gold,Richard Nixon.,S\n"  # 4: folds into line 2
    + "Q1,,Gerald Ford,\n"  # 5
    + "Q1,,gerald ford,\n"  # 6: folds into line 5 (both incorrect)
    + "Q2,Q2-a,RMS Titanic.,S\n"  # 7
    + "Q2,Q2-a,rms titanic,S\n"  # 8: folds into line 7
    + "Q2,Q2-a,RMS  Titanic,S\n"
)  # 9: folds too (spaces collapse)


def _collection(slug="study"):
    c = make_collection(slug=slug)
    make_question(collection=c, qid="Q1", text="Which president resigned?")
    make_question(collection=c, qid="Q2", text="Which ship sank in 1912?")
    return c


def _state(collection):
    """{qid: sorted (label, ordinal, [(text, variants, level)]) per synset, incorrect}"""
    out = {}
    for q in Question.objects.filter(collection=collection):
        syns = sorted(
            (
                syn.label,
                syn.ordinal,
                sorted((s.text, tuple(s.variants), s.level.code) for s in syn.strings.all()),
            )
            for syn in AnswerSynset.objects.filter(question=q)
        )
        wrong = sorted(
            (s.text, tuple(s.variants))
            for s in AnswerString.objects.filter(
                question=q, synset__isnull=True, judged_at__isnull=False
            )
        )
        out[q.qid] = (syns, wrong, q.status)
    return out


def test_agreeing_spellings_fold_into_one_string_with_variants():
    c = _collection()
    plan = import_plan(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    assert plan.ok, plan.issues
    assert plan.counts["spellings folded into another string"] == 4
    assert [(f.qid, f.text, f.spellings, f.lines) for f in plan.folds] == [
        ("Q1", "Richard Nixon", ["Richard Nixon."], [2, 4]),
        ("Q1", "Gerald Ford", ["gerald ford"], [5, 6]),
        ("Q2", "RMS Titanic.", ["rms titanic", "RMS  Titanic"], [7, 8, 9]),
    ]
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    nixon = AnswerString.objects.get(question__qid="Q1", text="Richard Nixon")
    assert nixon.variants == ["Richard Nixon."] and nixon.synset.label == "gold"
    assert nixon.level.code == "S"
    titanic = AnswerString.objects.get(question__qid="Q2")
    assert titanic.variants == ["rms titanic", "RMS  Titanic"]
    assert titanic.synset.label == "Q2-a"
    ford = AnswerString.objects.get(question__qid="Q1", text="Gerald Ford")
    assert ford.synset is None and ford.judged_at is not None and ford.variants == ["gerald ford"]
    assert AnswerString.objects.filter(question__collection=c).count() == 4
    assert set(
        AnswerSynset.objects.filter(question__collection=c).values_list("label", flat=True)
    ) == {"gold", "Q1-b", "Q2-a"}


def test_disagreeing_spellings_are_refused_naming_both_lines_and_judgments():
    c = _collection()
    bad = (
        HEADER
        + "Q1,Q1-b,Richard Nixon,A\n"  # 2
        + "Q1,gold,Nixon,S\n"  # 3
        + "Q1,gold,Richard Nixon.,S\n"  # 4: other synset than line 2
        + "Q1,gold,NIXON,A\n"  # 5: same synset as line 3, other level
        + "Q1,,nixon!,\n"
    )  # 6: incorrect, line 3 says correct
    plan = import_plan(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    assert [i.line for i in plan.issues] == [4, 5, 6]
    assert plan.issues[0].message == (
        'question \'Q1\': "Richard Nixon." (synset gold, level S) matches "Richard Nixon" '
        "on line 2 (synset Q1-b, level A) under normalized matching; one string has one "
        "judgment"
    )
    assert str(plan.issues[0]).startswith("j.csv:4: ")
    assert (
        '(synset gold, level A) matches "Nixon" on line 3 (synset gold, level S)'
        in plan.issues[1].message
    )
    assert '"nixon!" (judged incorrect) matches "Nixon" on line 3' in plan.issues[2].message
    assert "at most one synset" not in " ".join(i.message for i in plan.issues)
    assert not AnswerString.objects.filter(question__collection=c).exists()


def test_exact_matching_keeps_spellings_apart():
    c = make_collection(slug="exact", matching_mode="exact")
    make_question(collection=c, qid="Q1")
    data = HEADER + "Q1,gold,Richard Nixon,S\nQ1,gold,Richard Nixon.,S\n"
    plan = collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert plan.counts["spellings folded into another string"] == 0 and not plan.folds
    assert AnswerString.objects.filter(question__collection=c).count() == 2


def test_export_writes_labels_and_every_spelling_and_round_trips():
    c = _collection()
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    text = export_judgments(c)
    rows = [r[:4] for r in csv.reader(io.StringIO(text))][1:]
    assert sorted(rows) == sorted(r.split(",") for r in STUDY.strip().split("\n")[1:])
    fresh = _collection(slug="fresh")
    plan = collection_import(
        collection=fresh, kind="judgments", data=text.encode(), filename="export.csv"
    )
    assert plan.counts["spellings folded into another string"] == 4
    assert _state(fresh) == _state(c)
    assert export_judgments(fresh).split("\n")[0] == text.split("\n")[0]
    assert [r[:4] for r in csv.reader(io.StringIO(export_judgments(fresh)))] == [
        r[:4] for r in csv.reader(io.StringIO(text))
    ]
    owner = make_user()
    runs = {}
    for coll in (c, fresh):
        runs[coll.pk] = make_run(
            collection=coll,
            owner=owner,
            name="r",
            answers={"Q1": ["gerald ford", "Richard Nixon.", "nixon"], "Q2": ["rms titanic"]},
        )
    config = ScoreConfig()
    a = score_runs(c, [runs[c.pk]], config).per_question["r"]
    b = score_runs(fresh, [runs[fresh.pk]], config).per_question["r"]
    assert a.equals(b) and a.loc["Q2", "q_measure"] == 1.0
    # the command-line scorer reads the export too (agreeing rows fold there as well)
    j = parse_judgments_csv(text.encode(), filename="export.csv")
    assert j.nq == 2 and len(j.syn_q) == 3


def test_export_synset_ids_stay_unique_per_question():
    c = make_collection(slug="uniq")
    q = make_question(
        collection=c, qid="Q1", synsets=[[("Paris", "S")], [("Lyon", "A")], [("Nice", "B")]]
    )
    syn = {s.ordinal: s for s in AnswerSynset.objects.filter(question=q)}
    syn[1].label = "2"  # an imported id that is also the ordinal of another synset
    syn[1].save()
    syn[3].label = "2"  # and the same label twice (e.g. after an undo recreated one)
    syn[3].save()
    rows = [r[:4] for r in csv.reader(io.StringIO(export_judgments(c)))][1:]
    ids = {answer: synset for _, synset, answer, _ in rows}
    assert len(set(ids.values())) == 3 and ids["Paris"] == "2"
    fresh = make_collection(slug="uniq2")
    make_question(collection=fresh, qid="Q1")
    collection_import(
        collection=fresh, kind="judgments", data=export_judgments(c).encode(), filename="e.csv"
    )
    assert AnswerSynset.objects.filter(question__collection=fresh).count() == 3


def test_a_run_answering_with_a_variant_spelling_is_credited():
    c = _collection()
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    run = make_run(
        collection=c,
        owner=make_user(),
        name="v",
        answers={"Q1": ["Richard Nixon."], "Q2": ["RMS  Titanic"]},
    )
    j = collection_judgments(c)
    assert len(j.str_text) == 4  # one string per key, variants need no rows of their own
    scores = score_runs(c, [run], ScoreConfig())
    marks = scores.marks(["v"], ["Q1", "Q2"])
    assert list(marks["status"]) == ["correct", "correct"]
    assert scores.per_question["v"].loc["Q2", "q_measure"] == 1.0
    assert scores.per_question["v"].loc["Q1", "rr"] == 1.0


def test_replaced_strings_keep_their_spellings_as_variants():
    c = make_collection(slug="pooled")
    make_question(collection=c, qid="Q1", unjudged=["richard nixon!"])
    collection_import(
        collection=c,
        kind="judgments",
        data=(HEADER + "Q1,gold,Richard Nixon,S\n").encode(),
        filename="j.csv",
    )
    s = AnswerString.objects.get(question__collection=c)
    assert s.text == "Richard Nixon" and s.variants == ["richard nixon!"]


def test_long_synset_id_is_an_error_with_its_line():
    c = _collection()
    data = HEADER + "Q1," + "x" * 101 + ",Nixon,S\n"
    plan = import_plan(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert [i.line for i in plan.issues] == [2] and "longer than 100" in plan.issues[0].message


def test_mark_fully_judged_questions_done():
    c = _collection()
    make_question(collection=c, qid="Q3", unjudged=["Tokyo", "Kyoto"])
    data = STUDY + "Q3,t,Tokyo,S\n"
    plan = import_plan(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert plan.counts["questions fully judged by the file"] == 2  # Q3 keeps "Kyoto" unjudged
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    assert set(Question.objects.filter(collection=c).values_list("status", flat=True)) == {
        "in_progress"
    }
    plan = collection_import(
        collection=c, kind="judgments", data=data.encode(), filename="j.csv", mark_done=True
    )
    status = dict(Question.objects.filter(collection=c).values_list("qid", "status"))
    assert status == {"Q1": "done", "Q2": "done", "Q3": "in_progress"}
    assert plan.counts["questions marked done"] == 2


def test_preview_lists_folds_and_offers_to_mark_done(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    c = _collection()
    client.force_login(make_user(staff=True))
    f = SimpleUploadedFile("study.csv", STUDY.encode())
    r = client.post(
        f"/collections/{c.slug}/import/",
        {"kind": "judgments", "file": f},
        headers={"HX-Request": "true"},
    )
    html = r.content.decode()
    assert "spellings folded into another string" in html
    assert "<td>Richard Nixon</td><td>Richard Nixon.</td><td>2, 4</td>" in html
    assert "<td>RMS Titanic.</td><td>rms titanic · RMS  Titanic</td><td>7, 8, 9</td>" in html
    assert 'name="mark_done"' in html and "mark fully judged questions done" in html
    token = html.split('name="token" value="')[1].split('"')[0]
    r = client.post(f"/collections/{c.slug}/import/confirm/", {"token": token, "mark_done": "1"})
    assert r.status_code == 302
    assert set(Question.objects.filter(collection=c).values_list("status", flat=True)) == {"done"}
    r = client.get(f"/collections/{c.slug}/")
    assert r.status_code == 200
    stats = r.context["stats"]
    assert stats["done"] == stats["questions"] > 0 and stats["percent_done"] == 100


def test_workspace_shows_labels_and_variants_escaped(client):
    c = _collection()
    data = HEADER + (
        "Q1,gold,Richard Nixon,S\nQ1,gold,Richard Nixon.,S\n"
        "Q1,<b>x</b>,Nixon,A\nQ1,<b>x</b>,NIXON &,A\n"
        "Q1,,Ford,\nQ1,,ford.,\n"
    )
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    q = Question.objects.get(collection=c, qid="Q1")
    AnswerString.objects.create(
        question=q, text="Carter", key="carter", source="pool", variants=["CARTER", "carter?"]
    )
    client.force_login(make_user(staff=True))
    html = client.get(f"/questions/{q.pk}/judge/").content.decode()
    assert (
        '<span class="synset-label small muted" title="synset id in the imported file">'
        "gold</span>" in html
    )
    assert "&lt;b&gt;x&lt;/b&gt;</span>" in html and "<b>x</b>" not in html
    assert (
        '<span class="variants small muted" title="other spellings with the same '
        'matching key">also: Richard Nixon.</span>'
    ) in html
    assert "also: NIXON &amp;</span>" in html
    assert "also: ford.</span>" in html
    assert "also: CARTER · carter?</span>" in html


def test_run_page_marks_show_synset_labels(client):
    c = _collection()
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    owner = make_user(staff=True)
    run = make_run(
        collection=c,
        owner=owner,
        name="r",
        answers={"Q1": ["Richard Nixon."], "Q2": ["rms titanic"]},
    )
    client.force_login(owner)
    html = client.get(f"/collections/{c.slug}/runs/{run.pk}/").content.decode()
    assert "synset 1 (gold)" in html and "synset 1 (Q2-a)" in html


def test_import_command_marks_done_and_prints_folds(tmp_path, capsys):
    from django.core.management import call_command

    c = _collection()
    path = tmp_path / "study.csv"
    path.write_text(STUDY)
    call_command("import_judgments", c.slug, str(path), "--mark-done")
    out = capsys.readouterr().out
    assert "spellings folded into another string: 4" in out
    assert "questions marked done: 2" in out
    assert set(Question.objects.filter(collection=c).values_list("status", flat=True)) == {"done"}


def test_undo_brings_back_labels_and_variants():
    from annotate import judging

    c = _collection()
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    user = make_user(staff=True)
    q = Question.objects.get(collection=c, qid="Q1")
    gold, other = (AnswerSynset.objects.get(question=q, label=x) for x in ("gold", "Q1-b"))
    judging.synset_merge(question=q, synsets=[other.pk, gold.pk], by=user)
    assert list(AnswerSynset.objects.filter(question=q).values_list("label", flat=True)) == ["Q1-b"]
    judging.question_undo(question=q, by=user)
    assert sorted(AnswerSynset.objects.filter(question=q).values_list("label", flat=True)) == [
        "Q1-b",
        "gold",
    ]
    nixon = AnswerString.objects.get(question=q, text="Richard Nixon")
    judging.string_delete(question=q, string=nixon.pk, by=user)
    judging.question_undo(question=q, by=user)
    nixon = AnswerString.objects.get(question=q, text="Richard Nixon")
    assert nixon.variants == ["Richard Nixon."] and nixon.synset.label == "gold"


def test_string_edit_keeps_matching_variants_and_undo_restores_dropped_ones():
    from annotate import judging

    c = _collection("edit")
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    q = Question.objects.get(collection=c, qid="Q2")
    s = AnswerString.objects.get(question=q)
    assert sorted(s.variants) == ["RMS  Titanic", "rms titanic"]
    user = make_user(staff=True)
    # same key: the spellings still match and stay
    judging.string_edit(question=q, string=s.pk, text="RMS TITANIC", by=user)
    s.refresh_from_db()
    assert sorted(s.variants) == ["RMS  Titanic", "RMS Titanic.", "rms titanic"]
    # a new key: old spellings no longer match; they are named in the event, not kept
    event = judging.string_edit(question=q, string=s.pk, text="Titanic", by=user)
    s.refresh_from_db()
    assert s.variants == []
    assert sorted(event.after["dropped_variants"]) == [
        "RMS  Titanic",
        "RMS Titanic.",
        "rms titanic",
    ]
    judging.question_undo(question=q, by=user)
    s.refresh_from_db()
    assert s.text == "RMS TITANIC"
    assert sorted(s.variants) == ["RMS  Titanic", "RMS Titanic.", "rms titanic"]


def test_edit_page_names_dropped_spellings(client):
    c = _collection("editpage")
    collection_import(collection=c, kind="judgments", data=STUDY.encode(), filename="j.csv")
    q = Question.objects.get(collection=c, qid="Q2")
    s = AnswerString.objects.get(question=q)
    client.force_login(make_user(staff=True))
    r = client.post(
        f"/questions/{q.pk}/act/",
        {"op": "edit", "string": s.pk, "text": "Titanic"},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert "Spellings that no longer match the new text were dropped" in html
    assert "rms titanic" in html and "Undo brings them back." in html
