"""The score pages in Japanese (issue 25): with ``Accept-Language: ja`` the runs list, a
run's page, the comparison and the system ranking speak Japanese; the metrics' names, the
run names and the CSV downloads (data files: field names) stay as they are."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_runs_far_apart

pytestmark = pytest.mark.django_db

JA = {"accept-language": "ja,en;q=0.5"}


@pytest.fixture
def runs(client):
    collection, organizer = make_runs_far_apart(slug="ja-scores", organizer="ja-organizer")
    client.force_login(organizer)
    return {r.name: r for r in Run.objects.filter(collection=collection)}


def page(client, name: str, *args: object, query: str = "") -> str:
    r = client.get(reverse(f"evaluation:{name}", args=("ja-scores", *args)) + query, headers=JA)
    assert r.status_code == 200 and r["Content-Language"] == "ja"
    return html.unescape(r.content.decode())


def assert_japanese(text: str, *, japanese: list[str], english: list[str]) -> None:
    missing = [j for j in japanese if j not in text]
    left = [e for e in english if e in text]
    assert not missing and not left, f"missing {missing}, left in English {left}"


def test_the_runs_list_in_japanese(client, runs):
    text = page(client, "run-list")
    assert_japanese(
        text,
        japanese=[
            "2 つのランを比較",
            "システムの順位",
            "全ランをプールに投入",
            "判定済みの 20 問にわたる平均です。",
            "括弧内: 質問にわたる各平均の 95% t 区間。",
            "回答した質問",
            "採点の設定",
            "判定の最終変更:",
            "ダウンロード（CSV）",
        ],
        english=[
            "Compare two runs",
            "System ranking",
            "Pool all runs",
            "Means over the",
            "In brackets",
            "Questions answered",
            "Unjudged answers",
            "Score configuration",
            "judgments last changed",
            "Showing the defaults",
        ],
    )
    assert "Q-measure" in text and "top" in text  # metric and run names as they are


def test_a_runs_page_in_japanese(client, runs):
    text = page(client, "run-detail", runs["middle"].pk)
    assert_japanese(
        text,
        japanese=[
            "ラン middle",
            "提出者 ja-organizer",
            "判定済みの 20 問にわたる平均",
            "質問ごとのスコアをダウンロード（CSV）",
            "20 問。",
            "シンセット 1",  # the marked answers of a question
            "未判定</li>",  # "x": nobody judged it
            "未判定の回答",
        ],
        english=["Run middle", "mean over", "Per question", "Download the per-question", "by ja-"],
    )


def test_the_comparison_in_japanese(client, runs):
    a, b = runs["bottom"].pk, runs["top"].pk
    text = page(client, "compare", query=f"?a={a}&b={b}")
    assert_japanese(
        text,
        japanese=[
            "ランの比較",
            "A の平均",
            "符号検定 p",
            "判定済みの 20 問にわたる両側検定です。",
            "質問ごとの差",
            "↑ top が良い",
            "↓ bottom が良い",
            "20 問（Q-measure の差の順）",
            "すべての質問",
            "両方のリスト",
        ],
        english=[
            "Compare runs",
            "mean A",
            "sign test",
            "Two-sided tests",
            "Per-question differences",
            "top better",
            "bottom better",
            "ordered by",
            "All questions",
            "both lists",
        ],
    )


def test_the_same_run_twice_in_japanese(client, runs):
    pk = runs["top"].pk
    text = page(client, "compare", query=f"?a={pk}&b={pk}")
    assert "ラン A とラン B の両方に <strong>top</strong> を選びました。" in text


def test_the_system_ranking_in_japanese(client, runs):
    text = page(client, "ranking", query="?interval=bootstrap&trials=50")
    assert_japanese(
        text,
        japanese=[
            "システムの順位",
            "Q-measure の順です。",
            "（ブートストラップ標本 50 個、シード 0）",
            "すべての対の有意性（Q-measure）",
            "対応のある t 検定（Holm 補正）（3 対にわたる補正）",
            "代わりにランダム化 Tukey HSD を使う",
            "評価指標どうしの順位の一致",
            "Kendall の τ",
            "ブートストラップ・パーセンタイル区間",  # the interval menu
        ],
        english=[
            "Ordered by",
            "In brackets",
            "Significance of every pair",
            "Holm-corrected",
            "Randomised Tukey HSD instead",
            "Agreement between",
            "Kendall's",
            "bootstrap percentile interval",
        ],
    )


def test_why_a_figure_is_undefined_in_japanese(client, runs):
    """A footnote's reason comes from the view: in the page's language too."""
    Run.objects.exclude(name="top").delete()
    text = page(client, "ranking", query="?metric=q_measure&metric=rr")
    assert "未定義: ランが 2 件未満: 相関をとる順位がありません" in text
    assert "undefined" not in text and "fewer than two runs" not in text
    # a page without intervals says why in Japanese ("needs at least two" in English)
    assert "検定はランどうしを比較します。ランが少なくとも 2 件必要です。" in text


def test_the_csv_downloads_stay_english(client, runs):
    r = client.get(reverse("evaluation:run-list-csv", args=("ja-scores",)), headers=JA)
    body = r.content.decode()
    assert "run,owner,q_measure" in body.replace("\r", "") and "# collection=ja-scores" in body
