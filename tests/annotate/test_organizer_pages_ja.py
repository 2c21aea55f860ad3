"""The organizer's pages in Japanese (issue 25): with Accept-Language: ja every organizer page,
the agreement page and the layer note show Japanese text, and an error of an imported file
keeps its file and line number (the message is translated, the place is not)."""

from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.annotate.test_layer_views import judge_all
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

JA = {"accept-language": "ja"}


@pytest.fixture
def organizer_client(client):
    collection = make_collection(slug="ja-org")
    make_question(collection=collection, qid="Q1")
    client.force_login(make_user(staff=True))
    return client


def test_the_collection_overview_in_japanese(organizer_client):
    response = organizer_client.get("/collections/ja-org/", headers=JA)
    page = html.unescape(response.content.decode())
    assert response["Content-Language"] == "ja"
    assert "正解レベル" in page and "ダッシュボード" in page and "インポート / エクスポート" in page
    assert "Correctness levels" not in page and "Dashboard" not in page
    assert "あなたの役割: <strong>主催者</strong>" in page
    english = organizer_client.get("/collections/ja-org/").content.decode()
    assert "Your role: <strong>organizer</strong>" in english and "Correctness levels" in english


def test_the_import_preview_in_japanese_keeps_each_errors_line(organizer_client):
    body = b"question_id,answer\nQ1,Paris\nQ9,Rome\n"  # line 3: unknown question
    response = organizer_client.post(
        "/collections/ja-org/import/",
        {"kind": "flat", "file": SimpleUploadedFile("a.csv", body)},
        headers=JA,
    )
    page = html.unescape(response.content.decode())
    assert "a.csv: エラー 1 件、何もインポートしていません" in page
    assert "a.csv:3: 不明な質問 'Q9'" in page
    assert "nothing imported" not in page and "unknown question" not in page
    # a good file: the preview's counts, lists and columns in Japanese
    response = organizer_client.post(
        "/collections/ja-org/import/",
        {"kind": "flat", "file": SimpleUploadedFile("a.csv", b"question_id,answer\nQ1,Paris\n")},
        headers=JA,
    )
    page = html.unescape(response.content.decode())
    assert "a.csv のプレビュー" in page and "追加する候補文字列" in page
    assert "追加する文字列（未判定） (1)" in page and "<th>回答</th>" in page
    assert "インポートを確定" in page
    # the same file in English: the same line, the English message
    response = organizer_client.post(
        "/collections/ja-org/import/",
        {"kind": "flat", "file": SimpleUploadedFile("a.csv", body)},
    )
    assert "a.csv:3: unknown question 'Q9'" in html.unescape(response.content.decode())


@pytest.mark.parametrize(
    "path, text",
    [
        ("/collections/", "新しいコレクション"),
        ("/collections/new/", "正解レベル"),
        ("/collections/ja-org/edit/", "保存"),
        ("/collections/ja-org/members/", "メンバーを追加"),
        ("/collections/ja-org/dashboard/", "プーリングで再開された質問"),
        ("/collections/ja-org/agreement/", "独立判定を依頼する"),
        ("/collections/ja-org/import/", "ファイルを検査"),
    ],
)
def test_every_organizer_page_in_japanese(organizer_client, path, text):
    response = organizer_client.get(path, headers=JA)
    assert response.status_code == 200
    assert text in html.unescape(response.content.decode())


def test_the_agreement_page_and_the_layer_note_in_japanese(client):
    c = make_collection(slug="ja-layers")
    org, a, b = (make_user(username=n) for n in ("ja-org", "ja-ann", "ja-bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon", "McCartney", "Yoko"])
    client.force_login(org)
    url = reverse("annotate:collection-layers-request", args=[c.slug])
    client.post(url, {"assessors": [a.pk, b.pk], "k": "2"})
    w = {"q": q, "ids": {s.text: s.pk for s in q.strings.all()}}
    judge_all(client, w, a, [("Lennon", "new", "S"), ("McCartney", "new", "S"), ("Yoko", "x", "")])
    client.force_login(a)
    note = client.get(reverse("annotate:question-judge", args=[q.pk]), headers=JA)
    note = html.unescape(note.content.decode())
    assert "あなたのレイヤーは完了しています。" in note and "他の判定者 1 人を待っています" in note
    judge_all(client, w, b, [("Lennon", "new", "S"), ("McCartney", "x", ""), ("Yoko", "x", "")])
    client.force_login(org)
    page = client.get(reverse("annotate:collection-agreement", args=[c.slug]), headers=JA)
    page = html.unescape(page.content.decode())
    assert "<h1>一致度</h1>" in page and "ja-ann – ja-bob" in page
    assert "独立レイヤーのある質問 1 問" in page and "Krippendorff の α 名義" in page
    assert "1 番目 \\ 2 番目" in page
