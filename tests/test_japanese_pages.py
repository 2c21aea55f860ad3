"""Pages in Japanese (issue 25): with ``Accept-Language: ja`` the error pages and the
participant's run pages speak Japanese, their data (run names, file names) as it is; so do the run
file's own parse errors (evaluation.metrics, through the translator Django installs)."""

from __future__ import annotations

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template import loader
from django.utils import translation

from evaluation.models import Run
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

JA = {"accept-language": "ja,en;q=0.5"}


@pytest.fixture
def participant():
    collection = make_collection(slug="ja-runs", max_output_size=5, open_for_submissions=True)
    make_question(collection=collection, qid="Q1")
    user = make_user(username="ja-participant")
    add_member(collection=collection, user=user, role="participant")
    return user


def test_the_404_page_in_japanese(client, participant):
    client.force_login(participant)
    r = client.get("/collections/no-such-collection-xyz/", headers=JA)
    assert r.status_code == 404 and r["Content-Language"] == "ja"
    page = r.content.decode()
    assert '<html lang="ja">' in page
    assert "ページが見つかりません" in page and "コレクション一覧に戻る" in page
    assert "<code>/collections/no-such-collection-xyz/</code> には何もありません" in page
    assert "Page not found" not in page


def test_the_500_page_in_japanese_without_a_request():
    with translation.override("ja"):
        page = loader.get_template("500.html").render()
    assert "サーバーエラー" in page and "Server error" not in page


def test_the_run_upload_page_in_japanese(client, participant):
    client.force_login(participant)
    page = client.get("/collections/ja-runs/runs/upload/", headers=JA).content.decode()
    assert "<h1>ランをアップロード</h1>" in page
    assert "1つの質問の回答は最大 5 件までです" in page
    assert "自動判別" in page  # the format menu's first choice
    assert "Upload a run" not in page
    # upload.js's notes come from the catalog the page loads first
    assert page.index('src="/jsi18n/"') < page.index("js/upload.js")
    catalog = client.get("/jsi18n/", headers=JA).content.decode()
    assert json.dumps("処理中: ランを確認して保存しています…") in catalog  # JSON-escaped
    # a bad file: the page's words and the file's problems in Japanese
    bad = SimpleUploadedFile("r.tsv", b"Q1\t1\tParis\nQ1\tx\tLyon\nNOPE\t1\tRome\n")
    r = client.post("/collections/ja-runs/runs/upload/", {"name": "r1", "file": bad}, headers=JA)
    page = html.unescape(r.content.decode())
    assert "ランは保存されませんでした。" in page
    assert "2 件の問題が見つかりました（行の順）:" in page
    assert "2 行目:" in page and "3 行目:" in page
    assert "rank 'x' は正の整数ではありません" in page
    assert "質問 'NOPE' はこのコレクションにありません" in page
    assert "is not in this collection" not in page
    assert not Run.objects.exists()


def test_a_run_uploaded_in_japanese_says_so_in_japanese(client, participant):
    client.force_login(participant)
    good = SimpleUploadedFile("r.tsv", b"Q1\t1\tParis\n")
    r = client.post(
        "/collections/ja-runs/runs/upload/", {"name": "r1", "file": good}, headers=JA, follow=True
    )
    assert "ラン 'r1' をアップロードしました: 回答 1 件。" in html.unescape(r.content.decode())


def test_the_413_page_in_the_browsers_language(settings):
    """The size check answers before LocaleMiddleware runs: it reads the language from the
    browser itself."""
    from django.test import Client

    too_big = str(settings.MAX_REQUEST_BODY_BYTES + 1)
    for accept, lang in (("ja,en;q=0.5", "ja"), ("en", "en")):
        response = Client().generic(
            "POST",
            "/accounts/login/",
            b"",
            CONTENT_LENGTH=too_big,
            CONTENT_TYPE="multipart/form-data; boundary=xyz",
            headers={"accept-language": accept},
        )
        assert response.status_code == 413 and response["Content-Language"] == lang
        assert f'<html lang="{lang}">' in response.content.decode()


def test_a_jobs_count_unit_in_the_pages_language(client, participant):
    from django.utils import timezone

    from jobs.models import Job, JobStatus

    job = Job.objects.create(
        kind="t",
        label="t",
        func="x.y",
        user=participant,
        status=JobStatus.RUNNING,
        done=3,
        total=10,
        unit="lines",
        heartbeat_at=timezone.now(),  # a live worker's: not reaped
    )
    client.force_login(participant)
    page = client.get(f"/jobs/{job.pk}/status/", headers=JA).content.decode()
    assert "3 / 10 行" in page
    page = client.get(f"/jobs/{job.pk}/status/").content.decode()
    assert "3 of 10 lines" in page


def _organizer(client):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="organizer"))


def test_the_glossary_in_japanese(client, demo):
    _organizer(client)
    r = client.get("/help/glossary/", headers=JA)
    assert r.status_code == 200 and r["Content-Language"] == "ja"
    page = html.unescape(r.content.decode())
    assert "<h1>用語集</h1>" in page
    assert "打ち切り対応の評価指標: RR′、AP′、nDCG′、RBP′" in page
    assert "κ（Cohen のカッパ）" in page and "ASL（達成有意水準）" in page and "識別力" in page
    # the formulas and the metric symbols as they are
    assert "(β·cg(r) + count(r)) / (β·cig(r) + r)" in page and "Q-measure" in page
    assert "95% t 区間" in page and "スワップ率 5% となる差" in page  # no doubled %
    assert "What the figures" not in page and "Cohen's kappa" not in page


def test_the_reliability_page_in_japanese(client, demo):
    _organizer(client)
    r = client.get(f"/collections/{demo.slug}/reliability/?trials=20", headers=JA)
    assert r.status_code == 200 and r["Content-Language"] == "ja"
    page = html.unescape(r.content.decode())
    assert "<h1>信頼性</h1>" in page and "識別力順の評価指標" in page
    assert "ランの全ペア" in page and "ゲインに対する頑健性" in page
    assert "安定性" in page and "同順位の割合" in page  # a curve's title and axis
    assert "要約（CSV）" in page and "標本ファイル（CSV）" in page
    # a glossary link's words
    assert '#discriminative-power">有意なペア（ブートストラップ）</a>' in page
    for english in ("Metrics sorted by discrimination", "All pairs of runs", "Dashed line"):
        assert english not in page, english
    # an invalid configuration: the reason and the page's words in Japanese
    page = client.get(
        f"/collections/{demo.slug}/reliability/?trials=20&subset_size=0", headers=JA
    ).content.decode()
    assert "部分集合のサイズ c" in page


def test_a_reliability_configuration_refused_in_japanese(client, demo):
    _organizer(client)
    page = html.unescape(
        client.get(
            f"/collections/{demo.slug}/reliability/runs.csv?trials=99999999", headers=JA
        ).content.decode()
    )
    assert "パラメータが不正です:" in page


def test_a_glossary_mark_in_japanese():
    from django.template import Context, Template

    with translation.override("ja"):
        page = Template('{% load glossary %}{% term "q_measure" "Q-measure" True %}').render(
            Context()
        )
    assert 'aria-label="用語集の Q-measure">?</a>' in page


def test_a_suggestions_reason_in_japanese():
    """annotate.suggest imports no Django: the workspace translates its reasons."""
    from django.utils.translation import gettext

    from annotate.suggest import suggest

    hit = suggest("the epi dérmis!", {7: ["epidermis"]})
    typo = suggest("Kawabta", {1: ["Kawabata"]})
    with translation.override("ja"):
        assert hit.reason_in(gettext) == (
            "冠詞、句読点、空白とアクセント記号のみが異なる: 'the epi dérmis!' ~ 'epidermis'"
        )
        assert typo.reason_in(gettext) == "'Kawabata' の1文字の打ち間違い"
        assert typo.reason == "one-letter typo of 'Kawabata'"  # English, as the engine says
