"""The worked examples of docs/formats.md are real.

Each example file of the page is a fenced block whose info string names it
(```` ```csv title=judgments.csv ````).  These tests read the blocks out of the page and give
them to the real parsers, the importers, the score pages, ``export_collection`` /
``import_collection`` and ``manage.py score``: what the page says they give, and every
output it shows, is what the product gives.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from annotate.edits import Conflict
from annotate.exports import export_judgments
from annotate.imports import collection_import, import_plan
from annotate.judging import question_undo
from annotate.models import AnswerString, AnswerSynset, JudgmentEvent, Question
from evaluation import services
from evaluation.analysis import score_config
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import as archive_import
from evaluation.metrics import Judgments, Ranking, evaluate
from evaluation.metrics.judgment_parsers import parse_judgments_csv, parse_qrels
from evaluation.metrics.normalize import normalize_answer
from evaluation.metrics.parsers import (
    detect_run_format,
    parse_flat_answers,
    parse_questions_csv,
    parse_run,
)
from evaluation.models import Run
from tests.factories import add_member, make_collection, make_user

DOC = Path(__file__).resolve().parents[1] / "docs" / "formats.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCK = re.compile(r"^```\w+ title=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TITLED = BLOCK.findall(TEXT)
FILES = dict(TITLED)

# every example file of the page, each checked by a test below
CHECKED = {
    "questions.csv",
    "flat.csv",
    "judgments.csv",
    "judgments-spellings.csv",
    "judgments-export.csv",
    "noAF.tsv",
    "AF.csv",
    "score-table.txt",
    "score.csv",
    "score-trec.txt",
    "qrels.txt",
    "run.trec",
    "score-qrels.txt",
    "run-scores.csv",
    "archive/manifest.json",
    "archive/questions.csv",
    "archive/synsets.csv",
    "archive/strings.csv",
    "archive/events.jsonl",
    "archive/runs.json",
    "archive/run_answers.csv",
    "archive/layers.csv",
    "archive/layer_judgments.csv",
}
ARCHIVE = sorted(t.removeprefix("archive/") for t in CHECKED if t.startswith("archive/"))


def example(title: str) -> bytes:
    return FILES[title].encode("utf-8")


def csv_rows(title: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(FILES[title])))


def test_every_example_file_of_the_page_is_checked():
    titles = [t for t, _ in TITLED]
    assert len(titles) == len(set(titles)), "two examples with one title"
    assert set(titles) == CHECKED


def test_matching_keys_table():
    start = TEXT.index("| answer as written | `normalized` key | `exact` key |")
    row = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|$")
    rows = []
    for line in TEXT[start:].splitlines()[2:]:
        m = row.match(line)
        if not m:
            break
        rows.append(m.groups())
    assert len(rows) >= 8
    for text, normalized, exact in rows:
        assert normalize_answer(text, "normalized") == normalized, text
        assert normalize_answer(text, "exact") == exact, text
    assert normalize_answer("-40") == normalize_answer("40")  # the page's warning


def test_japanese_keys_table():
    """The Japanese table: NFKC under normalized (full-width Latin, half-width katakana),
    none under squad; and its worked case's reciprocal ranks."""
    start = TEXT.index("| answer as written | `normalized` key | `squad` key | `exact` key |")
    row = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|$")
    rows = []
    for line in TEXT[start:].splitlines()[2:]:
        m = row.match(line)
        if not m:
            break
        rows.append(m.groups())
    assert len(rows) == 7
    for text, normalized, squad, exact in rows:
        assert normalize_answer(text, "normalized") == normalized, text
        assert normalize_answer(text, "squad") == squad, text
        assert normalize_answer(text, "exact") == exact, text
    for mode, rr in (("normalized", 1.0), ("squad", 0.0), ("exact", 0.0)):
        judgments = Judgments.build(
            qids=["Q1"],
            synsets=["1"],
            texts=["トウキョウ"],
            levels_of=["S"],
            levels=["S"],
            gains=[1.0],
            match=mode,
        )
        run = Ranking("r", np.asarray(["Q1"], dtype=object), np.asarray(["ﾄｳｷｮｳ"], dtype=object))
        assert evaluate(judgments, [run], ["rr"]).values[0, 0, 0] == rr, mode


def test_questions_csv():
    rows = parse_questions_csv(example("questions.csv"))
    assert [(r.question_id, r.text) for r in rows] == [
        ("BEATLES", "Who played in the Beatles?"),
        ("LOVE", "What is love?"),
        ("SNOW-COUNTRY", "Who wrote the novel 'Snow Country'?"),
    ]
    assert rows[0].extra == {"topic": "music"}


def test_flat_answer_list_gives_three_candidates_under_normalized_matching():
    rows = parse_flat_answers(example("flat.csv"))
    assert [r.answer for r in rows] == [
        "Yasunari Kawabata",
        "Kawabata",
        "kawabata.",
        "Yukio Mishima",
    ]
    assert len({normalize_answer(r.answer, "normalized") for r in rows}) == 3
    assert len({normalize_answer(r.answer, "exact") for r in rows}) == 4


def test_judgments_csv_as_described():
    j = parse_judgments_csv(example("judgments.csv"))
    assert list(j.questions) == ["BEATLES", "LOVE"]
    assert j.synset_counts().tolist() == [4, 1]  # R
    incorrect = j.str_text[j.str_synset < 0].tolist()
    assert incorrect == ["Yoko Ono"]
    paul = j.str_synset[j.str_text == "Paul McCartney"][0]
    members = {
        t: j.levels[lv]
        for t, s, lv in zip(j.str_text, j.str_synset, j.str_level, strict=True)
        if s == paul
    }
    assert members == {"Paul McCartney": "S", "McCartney": "A", "Paul": "B"}
    assert j.syn_label.tolist() == ["paul", "john", "george", "ringo", "nil"]
    assert j.syn_nil.tolist() == [False, False, False, False, True]
    assert j.gains == (3.0, 2.0, 1.0)


def test_qa_runs_tsv_and_csv():
    assert detect_run_format(example("noAF.tsv")) == "qa"
    noaf = parse_run(example("noAF.tsv"), filename="noAF.tsv")
    assert noaf.name == "noAF"
    assert noaf.text.tolist() == ["McCartney", "Lennon", "Paul", "George Harrison", "Starr", "NIL"]
    af = parse_run(example("AF.csv"), filename="AF.csv")
    assert af.name == "AF"
    assert list(zip(af.qid.tolist(), af.text.tolist(), strict=True))[-2:] == [
        ("LOVE", "a feeling"),
        ("LOVE", "NIL"),
    ]
    assert af.score.tolist() == [0.9, 0.8, 0.7, 0.6, 0.5, 0.1]


def test_trec_qrels_and_run_order():
    qrels = parse_qrels(example("qrels.txt"))
    assert list(qrels.questions) == ["301", "302"]
    assert qrels.synset_counts().tolist() == [2, 1]
    relevant = dict(
        zip(
            qrels.syn_label.tolist(), (qrels.gains[x] for x in qrels.syn_xmax.tolist()), strict=True
        )
    )
    assert relevant == {"DOC-A": 2.0, "DOC-C": 1.0, "DOC-D": 1.0}
    run = parse_run(example("run.trec"), filename="run.trec")
    assert detect_run_format(example("run.trec")) == "trec"
    assert run.name == "mysys"
    assert list(zip(run.qid.tolist(), run.text.tolist(), strict=True)) == [
        ("301", "DOC-B"),
        ("301", "DOC-C"),
        ("301", "DOC-A"),
        ("302", "DOC-F"),
        ("302", "DOC-D"),
    ]


SCORE_RUNS = [
    (
        [
            "--judgments",
            "judgments.csv",
            "noAF.tsv",
            "AF.csv",
            "--metrics",
            "q_measure,r_measure,rr",
            "--format",
            "table",
        ],
        "score-table.txt",
    ),
    (
        [
            "--judgments",
            "judgments.csv",
            "noAF.tsv",
            "AF.csv",
            "--metrics",
            "q_measure,r_measure,rr",
            "--format",
            "csv",
        ],
        "score.csv",
    ),
    (
        [
            "--judgments",
            "judgments.csv",
            "noAF.tsv",
            "AF.csv",
            "--metrics",
            "q_measure,r_measure,rr",
            "--format",
            "trec",
        ],
        "score-trec.txt",
    ),
    (
        ["--qrels", "qrels.txt", "run.trec", "--metrics", "ap,rr,ndcg", "--format", "trec"],
        "score-qrels.txt",
    ),
]


def score(args: list[str], tmp_path: Path, monkeypatch) -> str:
    for name in ("judgments.csv", "noAF.tsv", "AF.csv", "qrels.txt", "run.trec"):
        (tmp_path / name).write_bytes(example(name))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    call_command("score", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(("args", "title"), SCORE_RUNS, ids=[t for _, t in SCORE_RUNS])
def test_score_command_prints_what_the_page_shows(args, title, tmp_path, monkeypatch):
    assert f"manage.py score {' '.join(args)}\n" in TEXT  # the command the page shows
    assert score(args, tmp_path, monkeypatch) == FILES[title]


def test_the_papers_beatles_values(tmp_path, monkeypatch):
    out = score(SCORE_RUNS[1][0], tmp_path, monkeypatch)
    table = pd.read_csv(io.StringIO(out), index_col=["run", "question_id"])
    assert round(table.at[("noAF", "BEATLES"), "q_measure"], 3) == 0.722
    assert table.at[("noAF", "BEATLES"), "r_measure"] == 0.625
    assert "Q-measure 0.722, R-measure 0.625" in TEXT


# -- through the app --------------------------------------------------------------------------
@pytest.fixture
def beatles(db):
    """The collection of the page's examples, built from its files by the importers."""
    c = make_collection(slug="beatles", name="Beatles")
    organizer = make_user(username="organizer")
    add_member(collection=c, user=organizer, role="organizer")
    for kind, title in (
        ("questions", "questions.csv"),
        ("flat", "flat.csv"),
        ("judgments", "judgments.csv"),
    ):
        collection_import(
            collection=c, kind=kind, data=example(title), filename=title, by=organizer
        )
    for title in ("noAF.tsv", "AF.csv"):
        services.run_import(
            collection=c,
            owner=organizer,
            name=title.split(".")[0],
            data=example(title),
            filename=title,
        )
    c.refresh_from_db()
    return c, organizer


def test_imports_give_what_the_page_says(beatles):
    c, _ = beatles
    assert list(
        Question.objects.filter(collection=c).order_by("qid").values_list("qid", flat=True)
    ) == ["BEATLES", "LOVE", "SNOW-COUNTRY"]
    strings = AnswerString.objects.filter(question__collection=c)
    snow = strings.filter(question__qid="SNOW-COUNTRY")
    assert sorted(snow.values_list("text", flat=True)) == [
        "Kawabata",
        "Yasunari Kawabata",
        "Yukio Mishima",
    ]
    assert not snow.filter(judged_at__isnull=False).exists()
    assert AnswerSynset.objects.filter(question__qid="BEATLES", question__collection=c).count() == 4
    assert list(
        strings.filter(question__qid="BEATLES", synset__isnull=True).values_list("text", flat=True)
    ) == ["Yoko Ono"]
    nil = strings.get(question__qid="LOVE")
    assert (nil.text, nil.level.code) == ("NIL", "A")


def test_judgments_spellings_fold_as_described(db):
    c = make_collection(slug="spellings")
    Question.objects.create(collection=c, qid="NIXON", text="Which president resigned?")
    data = example("judgments-spellings.csv")
    plan = import_plan(
        collection=c, kind="judgments", data=data, filename="judgments-spellings.csv"
    )
    assert plan.ok and len(plan.folds) == 2
    assert plan.counts["spellings folded into another string"] == 2
    collection_import(collection=c, kind="judgments", data=data, filename="judgments-spellings.csv")
    got = sorted(
        (
            s.text,
            s.variants,
            s.synset.label if s.synset else None,
            s.level.code if s.level else None,
        )
        for s in AnswerString.objects.filter(question__collection=c)
    )
    assert got == [
        ("Gerald Ford", ["gerald ford"], None, None),
        ("Nixon", [], "Q1-b", "A"),
        ("Richard Nixon", ["Richard Nixon."], "gold", "S"),
    ]
    refused = data.replace(b"Richard Nixon.,S", b"Richard Nixon.,A")
    plan = import_plan(
        collection=c, kind="judgments", data=refused, filename="judgments-spellings.csv"
    )
    assert not plan.ok
    assert [(i.line, "on line 2" in i.message) for i in plan.issues] == [(3, True)]
    # the export writes every spelling with its string's judgment
    exported = list(csv.reader(io.StringIO(export_judgments(c))))
    assert sorted(r[:4] for r in exported[1:]) == sorted(csv_rows("judgments-spellings.csv")[1:])
    # the scorer folds the same way; a run answering `richard nixon` gets the gold synset
    j = parse_judgments_csv(data)
    run = Ranking.from_lists("r", {"NIXON": ["richard nixon", "gerald ford"]})
    marked = evaluate(j, [run]).marked.frame()
    assert list(marked["status"]) == ["correct", "incorrect"]
    assert marked["synset"].iloc[0] == "gold"


def test_judgments_export_example_round_trips(db):
    c = make_collection(slug="codes")
    organizer = make_user(username="organizer")
    rows = csv_rows("judgments-export.csv")
    header, body = rows[0], rows[1:]
    assert header == [
        "question_id",
        "synset_id",
        "answer",
        "level",
        "question",
        "assessor",
        "updated",
    ]
    Question.objects.create(collection=c, qid=body[0][0], text=body[0][4])
    collection_import(
        collection=c,
        kind="judgments",
        data=example("judgments-export.csv"),
        filename="judgments-export.csv",
        by=organizer,
    )
    strings = AnswerString.objects.filter(question__collection=c)
    assert sorted(
        (s.text, s.synset_id is not None, s.level.code if s.level else "") for s in strings
    ) == [("+1", False, ""), ("+81", True, "S"), ("81", True, "A")]
    exported = list(csv.reader(io.StringIO(export_judgments(c))))
    assert exported[0] == header
    assert [r[:6] for r in exported[1:]] == [r[:6] for r in body]


def test_run_scores_csv_of_the_page(beatles, client):
    c, organizer = beatles
    query = "?metric=q_measure&metric=r_measure&metric=rr"
    assert f"scores.csv{query}`" in TEXT
    run = Run.objects.get(collection=c, name="noAF")
    client.force_login(organizer)
    got = client.get(f"/collections/{c.slug}/runs/{run.pk}/scores.csv{query}")
    assert got.status_code == 200
    text = got.content.decode()
    volatile = ("# judgments_version=", "# judgments_changed_at=")

    def stable(lines):
        return [next((v for v in volatile if line.startswith(v)), line) for line in lines]

    assert stable(text.splitlines()) == stable(FILES["run-scores.csv"].splitlines())
    frame = pd.read_csv(io.StringIO(text), comment="#")
    doc = pd.read_csv(io.StringIO(FILES["run-scores.csv"]), comment="#")
    pd.testing.assert_frame_equal(frame, doc)
    assert round(frame.set_index("question_id").at["BEATLES", "q_measure"], 3) == 0.722

    af = Run.objects.get(collection=c, name="AF")
    compare = client.get(
        f"/collections/{c.slug}/compare.csv?a={run.pk}&b={af.pk}&metric=q_measure"
    ).content.decode()
    header = next(line for line in compare.splitlines() if not line.startswith("#"))
    assert f"`{header}`" in TEXT
    assert "question,q_measure:BEATLES," in compare
    ranking = client.get(
        f"/collections/{c.slug}/ranking.csv?metric=q_measure&metric=rr"
    ).content.decode()
    lines = [line for line in ranking.splitlines() if not line.startswith("#")]
    assert lines[0] == "run,q_measure,rr,q_measure_ci_low,q_measure_ci_high,rr_ci_low,rr_ci_high"
    assert "`run,<metrics>,<metric>_ci_low,<metric>_ci_high,...`" in TEXT
    assert "# interval=t" in ranking and "# level=0.95" in ranking
    assert {line.split(",")[0] for line in lines[-2:]} == {
        "kendall_tau:q_measure:rr",
        "spearman_rho:q_measure:rr",
    }


def test_the_archive_members_are_those_an_export_writes(beatles):
    c, _ = beatles
    z = zipfile.ZipFile(io.BytesIO(collection_export(collection=c)))
    assert sorted(z.namelist()) == ARCHIVE
    for name in ARCHIVE:
        got = z.read(name).decode()
        doc = FILES[f"archive/{name}"]
        if name.endswith(".csv"):
            assert got.splitlines()[0] == doc.splitlines()[0], name
            assert f"`{doc.splitlines()[0]}`" in TEXT, name  # the members table
        elif name == "manifest.json":
            got_m, doc_m = json.loads(got), json.loads(doc)
            assert got_m.keys() == doc_m.keys()
            assert got_m["collection"].keys() == doc_m["collection"].keys()
            assert [lv.keys() for lv in got_m["levels"]] == [lv.keys() for lv in doc_m["levels"]]
        elif name == "events.jsonl":
            keys = {tuple(json.loads(line)) for line in got.splitlines()}
            assert keys == {tuple(json.loads(line)) for line in doc.splitlines()}
        else:
            assert [r.keys() for r in json.loads(got)][:1] == [r.keys() for r in json.loads(doc)][
                :1
            ]


def test_the_archive_example_imports(db):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in ARCHIVE:
            z.writestr(name, FILES[f"archive/{name}"])
    c = archive_import(data=buf.getvalue(), slug="love-copy")
    q = Question.objects.get(collection=c, qid="LOVE")
    assert q.status == "done"
    strings = {
        s.text: (s.synset_id is not None, s.level.code if s.level else "")
        for s in AnswerString.objects.filter(question=q)
    }
    assert strings == {"NIL": (True, "A"), "a feeling": (False, "")}
    nil = AnswerString.objects.get(question=q, text="NIL")
    assert (nil.variants, nil.synset.label) == (["nil."], "nil")
    assert sorted(c.memberships.values_list("user__username", "role")) == [
        ("organizer", "organizer"),
        ("participant", "participant"),
    ]
    # the audit trail names the new collection's rows
    feeling = AnswerString.objects.get(question=q, text="a feeling")
    judged, undo = JudgmentEvent.objects.filter(question=q).order_by("id")
    assert list(undo.after["strings"]) == [str(feeling.pk)]
    assert undo.after["undoes"] == judged.pk
    synset = judged.after["strings"][str(feeling.pk)]["synset"]
    assert judged.after["synsets"][0][0] == nil.synset_id
    assert synset != nil.synset_id and not AnswerSynset.objects.filter(pk=synset).exists()
    assert judged.after["strings"][str(feeling.pk)]["level"] == c.levels.get(code="B").pk
    with pytest.raises(Conflict, match="Nothing to undo"):
        question_undo(question=q, by=None, any_user=True)
    run = Run.objects.get(collection=c, name="AF")
    config = score_config.check_config(
        metrics=["q_measure"], gains="default", beta=1.0, rbp_p=0.5, levels=["S", "A", "B"]
    )
    scores = services.score_runs(c, [run], config)
    assert scores.per_question["AF"].at["LOVE", "q_measure"] == 1.0
    assert np.isclose(scores.means().at["AF", "q_measure"], 1.0)
