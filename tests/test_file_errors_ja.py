"""The per-line errors of uploaded files in the reader's language (issue 25): the scoring
engine (evaluation.metrics, no Django) says them through a translator that Django installs
at start-up (``errors.set_translator(gettext)`` in EvaluationConfig.ready), so the web
pages and jobs give them in the active language, while the command-line tools, which never
install it, print them in English."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils import translation

from annotate.imports import import_plan
from evaluation import services
from evaluation.metrics import errors
from evaluation.metrics.errors import InputError
from evaluation.metrics.parsers import parse_qa_run, question_rows
from tests.factories import add_member, make_collection, make_question, make_user

ROOT = Path(__file__).resolve().parent.parent
BAD_RUN = b"Q1\t1\tParis\nQ1\tx\tLyon\nQ1\t1\t\nNOPE\t1\tRome\n"


def _messages(issues):
    return [(i.line, i.message) for i in issues]


@pytest.mark.django_db
def test_a_bad_run_is_refused_in_japanese_line_by_line():
    c = make_collection(slug="ja-errors", max_output_size=5)
    make_question(collection=c, qid="Q1")
    owner = make_user(username="ja-owner")
    add_member(collection=c, user=owner, role="organizer")
    with translation.override("ja"), pytest.raises(InputError) as e:
        services.run_import(collection=c, owner=owner, name="r1", data=BAD_RUN, filename="r.tsv")
    assert _messages(e.value.issues) == [
        (2, "rank 'x' は正の整数ではありません"),
        (3, "質問 'Q1' の rank 1 の回答が空です"),
        (4, "質問 'NOPE' はこのコレクションにありません"),
    ]
    assert "r.tsv:2: rank 'x' は正の整数ではありません" in str(e.value)


@pytest.mark.django_db
def test_the_same_run_in_english_for_an_english_reader():
    c = make_collection(slug="en-errors", max_output_size=5)
    make_question(collection=c, qid="Q1")
    owner = make_user(username="en-owner")
    add_member(collection=c, user=owner, role="organizer")
    with translation.override("en"), pytest.raises(InputError) as e:
        services.run_import(collection=c, owner=owner, name="r1", data=BAD_RUN, filename="r.tsv")
    assert _messages(e.value.issues) == [
        (2, "rank 'x' is not a positive integer"),
        (3, "empty answer for question 'Q1' at rank 1"),
        (4, "question 'NOPE' is not in this collection"),
    ]


def test_the_engine_alone_speaks_english():
    """Without Django (the command-line tools), the engine's messages are English."""
    code = (
        "import sys\n"
        "from evaluation.metrics.parsers import parse_qa_run\n"
        "from evaluation.metrics.errors import InputError\n"
        "try:\n"
        f"    parse_qa_run({BAD_RUN!r}, filename='r.tsv')\n"
        "except InputError as e:\n"
        "    print(e)\n"
        "assert 'django' not in sys.modules, 'the engine imported Django'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == [
        "r.tsv:2: rank 'x' is not a positive integer",
        "r.tsv:3: empty answer for question 'Q1' at rank 1",
    ]


def test_without_the_translator_the_engine_speaks_english_in_any_language():
    installed = errors._translator
    errors.set_translator(None)
    try:
        with translation.override("ja"), pytest.raises(InputError) as e:
            parse_qa_run(BAD_RUN, filename="r.tsv")
        assert _messages(e.value.issues)[0] == (2, "rank 'x' is not a positive integer")
    finally:
        errors.set_translator(installed)
    with translation.override("ja"), pytest.raises(InputError) as e:
        parse_qa_run(BAD_RUN, filename="r.tsv")
    assert _messages(e.value.issues)[0] == (2, "rank 'x' は正の整数ではありません")


def test_the_note_that_counting_stopped_is_translated_and_still_last():
    data = "question_id,question\n" + "".join(f"Q{n},\n" for n in range(errors.MAX_ISSUES + 5))
    with translation.override("ja"):
        _, issues = question_rows(data.encode(), filename="q.csv")
    assert len(issues) == errors.MAX_ISSUES + 1
    assert issues[0].message == "質問 'Q0' の質問文が空です"
    assert (issues[-1].line, issues[-1].message) == (
        None,
        "エラーが多すぎるため、数えるのをやめました",
    )
    assert errors.is_truncated(issues[-1])
    with translation.override("ja"):  # the note is made again in the reader's language
        merged = errors.merge_issues("q.csv", issues, [errors.Issue("q.csv", 3, "x")])
    assert merged[-1].message == "エラーが多すぎるため、数えるのをやめました"
    assert sum(1 for i in merged if errors.is_truncated(i)) == 1


@pytest.mark.django_db
def test_a_bad_judgments_csv_is_explained_in_japanese():
    c = make_collection()
    make_question(collection=c, qid="Q1")
    bad = (
        "question_id,synset_id,answer,level\n"
        "Q1,1,Paris,S\n"
        "Q1,1,Lyon,Z\n"  # line 3: unknown level (the engine's check)
        "Q1,1,,S\n"  # line 4: no answer (the engine's check)
        "Q1,2,\x1b,A\n"  # line 5: a control character (the engine's text rule)
        "Q9,1,Rome,S\n"  # line 6: unknown question (the importer's check)
        "Q1,,Oslo,A\n"  # line 7: synset without level
    )
    with translation.override("ja"):
        plan = import_plan(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    assert _messages(plan.issues) == [
        (3, "不明なレベル 'Z'（S, A, B のいずれかにしてください）"),
        (4, "質問 'Q1' の回答が空です"),
        (
            5,
            "次の文字を含んでいます: 制御文字 U+001B。"
            "テキストに使える制御文字はタブ、改行、復帰だけです",
        ),
        (6, "不明な質問 'Q9'"),
        (
            7,
            "回答 'Oslo': synset_id と level は両方とも指定する（正解）か、"
            "両方とも空にする（不正解と判定）必要があります",
        ),
    ]


def test_csv_format_errors_in_japanese():
    from evaluation.metrics.csvio import CsvFormatError, read_csv

    with translation.override("ja"), pytest.raises(CsvFormatError) as e:
        read_csv("# bad\nq,a\n")
    assert str(e.value) == "1 行目: '# key=value' の行が必要ですが、'# bad' があります"
    with translation.override("en"), pytest.raises(CsvFormatError) as e:
        read_csv("# bad\nq,a\n")
    assert str(e.value) == "line 1: expected a '# key=value' line, found '# bad'"


@pytest.mark.django_db
def test_an_unreadable_archive_is_explained_in_japanese():
    from evaluation.archive.validation import Archive

    with translation.override("ja"):
        archive = Archive(b"not a zip", "c.zip")
    assert archive.issues and archive.issues[0].message.startswith("アーカイブを読めません: ")


def _broken_levels(m):
    m["collection"]["judgments_changed_at"] = "yesterday"
    m["levels"][0]["gain"] = -1
    m["levels"][1]["label"] = 7
    m["levels"][1]["order"] = m["levels"][0]["order"]


ARCHIVE_EN = [
    ("c.zip:manifest.json", None, "collection.judgments_changed_at: 'yesterday' is not a time"),
    (
        "c.zip:manifest.json",
        None,
        "level 1: gain -1 is out of range: gains are numbers from 0 to 1e+06",
    ),
    ("c.zip:manifest.json", None, "level 2: label must be text of at most 100 characters"),
    ("c.zip:manifest.json", None, "level 2: order 0 must be a distinct number 0..32767"),
    ("c.zip:questions.csv", 2, "status 'finished' is not one of todo, in_progress, done"),
    ("c.zip:questions.csv", 2, "version '-1' is not a number >= 0"),
    ("c.zip:questions.csv", 2, "assessor 'bad!name' is not a valid username"),
]
ARCHIVE_JA = [
    (
        "c.zip:manifest.json",
        None,
        "collection.judgments_changed_at: 'yesterday' は日時ではありません",
    ),
    (
        "c.zip:manifest.json",
        None,
        "level 1: gain -1 が範囲外です。gain は 0 から 1e+06 までの数値です",
    ),
    ("c.zip:manifest.json", None, "level 2: label は 100 文字以内のテキストにしてください"),
    ("c.zip:manifest.json", None, "level 2: order 0 は 0〜32767 の重複しない数値にしてください"),
    (
        "c.zip:questions.csv",
        2,
        "status 'finished' は todo, in_progress, done のいずれでもありません",
    ),
    ("c.zip:questions.csv", 2, "version '-1' は 0 以上の数値ではありません"),
    ("c.zip:questions.csv", 2, "判定者 'bad!name' は有効なユーザー名ではありません"),
]


@pytest.mark.django_db
def test_an_archive_s_content_errors_in_japanese_and_english(demo):
    """The checks of an archive's manifest and tables speak the reader's language; in
    English they say what they always said."""
    from evaluation.archive.exporting import collection_export
    from evaluation.archive.validation import Archive
    from tests.evaluation.test_archive import manifest, rewrite

    old = "EX1-BEATLES,Who played in the Beatles?,done,,0,assessor1"
    new = "EX1-BEATLES,Who played in the Beatles?,finished,,-1,bad!name"
    data = rewrite(
        collection_export(collection=demo),
        manifest_json=manifest(_broken_levels),
        questions_csv=lambda text: text.replace(old, new, 1),
    )
    found = {}
    for language in ("ja", "en"):
        with translation.override(language):
            found[language] = [(i.file, i.line, i.message) for i in Archive(data, "c.zip").issues]
    assert found == {"ja": ARCHIVE_JA, "en": ARCHIVE_EN}


def test_score_parameter_errors_in_japanese_and_english():
    """The engine's checks of the score parameters (gains, beta, RBP's p, metric names), as
    the score pages' forms and the level editor show them."""
    from evaluation.metrics import parse_gains, parse_metrics
    from evaluation.metrics.gains import check_parameters

    def message(call) -> str:
        with pytest.raises(ValueError) as raised:
            call()
        return str(raised.value)

    cases = [
        lambda: parse_gains("3:x"),
        lambda: parse_gains("S=-1"),
        lambda: check_parameters(beta=-1),
        lambda: check_parameters(rbp_p=1.5),
        lambda: parse_metrics("q_measure,nope"),
    ]
    with translation.override("en"):
        english = [message(c) for c in cases]
    with translation.override("ja"):
        japanese = [message(c) for c in cases]
    assert english == [
        "bad gain profile '3:x' (expected e.g. 3:2:1, 1:1:1, 10:5:1, S=3,A=2,B=1 or adjusted)",
        "gain of 'S' -1.0 is out of range: gains are numbers from 0 to 1e+06",
        "beta -1 is out of range: it must be from 0 to 1000",
        "the RBP persistence p 1.5 is out of range: it must be in [0, 1)",
        "unknown metric(s) nope; known: " + english[4].split("known: ", 1)[1],
    ]
    assert japanese[0].startswith("利得プロファイル '3:x' が不正です")
    assert japanese[1] == "'S' の利得 -1.0 は範囲外です: 利得は 0 から 1e+06 までの数値です"
    assert "範囲外" in japanese[2] and "範囲外" in japanese[3]
    assert japanese[4].startswith("不明な評価指標 nope")
