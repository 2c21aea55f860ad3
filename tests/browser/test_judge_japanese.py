"""A whole judging session in Japanese (issue 25): an assessor whose browser asks for
Japanese (``Accept-Language: ja``, locale ja-JP) logs in, opens My queue, judges a
question with the keyboard while an input method's composition events arrive (nothing is
judged during the composition), groups the strings into synsets, sets levels and marks the
question done.  Every page's words are Japanese; only the data (question, answer strings,
level codes and labels, guidelines, user names) and key names stay as they are.
Screenshots go to test-artifacts/ (judge-ja-*.png)."""

import re

import pytest

from annotate.models import AnswerString, Question, QuestionStatus
from tests.factories import make_question

from .conftest import login
from .test_adjudicate_page import adjudicated  # noqa: F401 (a fixture)
from .test_judge_ime import COMPOSE, FULL_WIDTH_KEY

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# the workspace's visible text without the data and the key names: what is left must
# hold no English word of the UI (the history's lines hold user names: checked apart; the
# status is the model's label)
UI_TEXT = """() => {
  const copy = document.getElementById("workspace").cloneNode(true);
  const data = [
    "kbd", ".qid", ".text", ".badge", "h1", ".guidelines-text", ".levels-help dt",
    ".level-examples q", ".variants", ".suggest-reason", ".history .event", ".status",
    "select[name=level]", "#cur-level", ".synset-label", "input", "textarea",
    ".crumbs a:nth-of-type(2)", "[hidden]",
  ];
  copy.querySelectorAll(data.join(",")).forEach((el) => el.remove());
  document.body.appendChild(copy);
  const text = copy.innerText;
  copy.remove();
  return text;
}"""
# words the Japanese pages keep: symbols, names of keys and systems, the metric R
KEPT = {"R", "NIL", "IME", "Windows", "Mac", "Ctrl", "Space", "Enter", "Delete", "Esc", "xmax"}


def _english_words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]{2,}", text)) - KEPT


def _states(q):
    return {
        s.text: (s.state, s.synset and s.synset.ordinal, s.level and s.level.code)
        for s in AnswerString.objects.filter(question=q).select_related("synset", "level")
    }


@pytest.fixture
def ja_page(browser):
    context = browser.new_context(
        viewport={"width": 1366, "height": 900},
        locale="ja-JP",
        extra_http_headers={"Accept-Language": "ja"},
    )
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def test_an_assessor_judges_a_question_in_japanese(ja_page, live_server, demo, artifacts):
    from django.contrib.auth import get_user_model
    from playwright.sync_api import expect

    page = ja_page
    q = make_question(
        collection=demo,
        qid="JA-SNOW",
        text="小説『雪国』の作者は誰ですか？",
        unjudged=["川端康成", "川端", "カワバタ", "三島由紀夫"],
    )
    q.assessors.add(get_user_model().objects.get(username="assessor1"))

    # log in
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.locator("h1")).to_have_text("ログイン")
    expect(page.locator("button[type=submit].primary")).to_have_text("ログイン")
    page.screenshot(path=str(artifacts / "judge-ja-1-login.png"))
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")

    # My queue, from the menu
    page.locator("#mainnav").get_by_role("link", name="自分の担当").click()
    page.wait_for_url(f"{live_server.url}/queue/")
    expect(page.locator("h1")).to_have_text("自分の担当")
    expect(page.locator("main")).to_contain_text("判定する質問が残り")
    expect(page.locator("main thead")).to_contain_text("質問")
    expect(page.locator("main thead")).to_contain_text("未判定")
    expect(page.locator("main .button.primary")).to_have_text("次に判定する質問")
    page.screenshot(path=str(artifacts / "judge-ja-2-my-queue.png"), full_page=True)
    page.get_by_role("link", name="JA-SNOW").click()
    page.wait_for_url(f"{live_server.url}/questions/{q.pk}/judge/")

    # the workspace, in Japanese
    focused = page.locator("#workspace [data-item]:focus .text")
    expect(focused).to_have_text("川端康成")
    # the badge of the level the next key gives (app.css shows the label and the code)
    expect(page.locator("#workspace .cand:focus")).to_have_attribute("data-next-label", "次:")
    legend = page.locator("#legend")
    expect(legend).to_contain_text("シンセットへ")
    expect(legend).to_contain_text("不正解")
    expect(legend).to_contain_text("完了して次へ")
    expect(page.locator("#ime-note")).to_contain_text("日本語入力(IME)がオフ")
    expect(page.locator("#guidelines summary")).to_contain_text("判定基準")
    expect(page.locator(".pool h2").first).to_contain_text("候補")
    expect(page.locator(".synsets h2")).to_contain_text("シンセット")
    expect(page.locator(".ws-buttons button[value=undo]")).to_have_text("取り消す (u)")
    expect(page.locator(".ws-buttons button[value=done]")).to_have_text("完了して次へ (d)")
    expect(page.locator("#add-text")).to_have_attribute("placeholder", "回答文字列を入力")
    assert _english_words(page.evaluate(UI_TEXT)) == set()

    # an IME's composition: its keys judge nothing, the hint (judge.js, through /jsi18n/)
    # says in Japanese how to switch it off
    writes = []
    page.on("request", lambda r: writes.append(r.url) if r.method == "POST" else None)
    before, version = _states(q), q.version
    page.evaluate(COMPOSE, None)
    expect(page.locator("#key-hint")).to_contain_text("日本語入力(IME)がオンです")
    page.screenshot(path=str(artifacts / "judge-ja-3-ime-on.png"), full_page=True)
    page.wait_for_timeout(500)
    assert writes == []
    q.refresh_from_db()
    assert (_states(q), q.version) == (before, version)
    expect(focused).to_have_text("川端康成")

    # judging with the keys once the IME is off: a full-width digit is the digit
    kb = page.keyboard
    r = page.locator("#q-r")
    kb.press("s")
    kb.press("n")  # 川端康成: a new synset 1, level S
    expect(r).to_have_text("1")
    expect(focused).to_have_text("川端")
    kb.press("a")  # level A for the next judgments
    expect(page.locator("#cur-level")).to_have_text("A")
    page.evaluate(FULL_WIDTH_KEY, ["１", "Digit1"])  # 川端 into synset 1 at A
    expect(page.locator('.synset[data-ordinal="1"] .member .text')).to_have_text(
        ["川端康成", "川端"]
    )
    expect(focused).to_have_text("カワバタ")
    kb.press("n")  # カワバタ: a new synset 2 at A
    expect(r).to_have_text("2")
    expect(focused).to_have_text("三島由紀夫")
    kb.press("x")  # incorrect
    expect(page.locator(".incorrect .text")).to_have_text(["三島由紀夫"])
    expect(page.locator("#all-judged")).to_contain_text("すべての文字列を判定しました")
    expect(page.locator("#key-hint")).to_contain_text("すべての文字列を判定しました")

    # the strings of the synsets: カワバタ to level B, then its synset merged into 1
    for _ in range(4):  # 三島由紀夫 (incorrect), then the synsets' strings in order
        kb.press("j")
    expect(focused).to_have_text("カワバタ")
    kb.press("b")
    expect(page.locator('.synset[data-ordinal="2"] .badge').first).to_have_text("B")
    kb.press("m")
    expect(page.locator("#key-hint")).to_contain_text("このシンセットの統合先")
    kb.press("1")
    expect(r).to_have_text("1")
    expect(page.locator('.synset[data-ordinal="1"] .member .text')).to_have_text(
        ["川端康成", "川端", "カワバタ"]
    )
    assert page.locator(".notice").count() == 0
    expect(page.locator(".synset .muted.small").first).to_contain_text("3 文字列")
    expect(page.locator(".history .event")).to_have_text(
        [
            "assessor1 がシンセット 2 をシンセット 1 に統合しました",
            "assessor1 が「カワバタ」(シンセット 2)の正解レベルを B にしました",
            "assessor1 が「三島由紀夫」を不正解と判定しました",
            "assessor1 が「カワバタ」を新しいシンセット 2 に入れました(正解レベル A)",
            "assessor1 が「川端」をシンセット 1 に入れました(正解レベル A)",
            "assessor1 が「川端康成」を新しいシンセット 1 に入れました(正解レベル S)",
        ]
    )
    assert _english_words(page.evaluate(UI_TEXT)) == set()
    page.screenshot(path=str(artifacts / "judge-ja-4-judged.png"), full_page=True)
    assert _states(q) == {
        "川端康成": ("correct", 1, "S"),
        "川端": ("correct", 1, "A"),
        "カワバタ": ("correct", 1, "B"),
        "三島由紀夫": ("incorrect", None, None),
    }

    # done and on to the next question
    kb.press("d")
    page.wait_for_url(lambda url: f"/questions/{q.pk}/" not in url)
    q.refresh_from_db()
    assert q.status == QuestionStatus.DONE
    page.screenshot(path=str(artifacts / "judge-ja-5-next.png"), full_page=True)
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    expect(page.locator(".ws-buttons button[value=reopen]")).to_have_text("再開")
    assert _english_words(page.evaluate(UI_TEXT)) == set()


def test_the_pages_stay_english_without_a_japanese_browser(page, live_server, demo):
    from playwright.sync_api import expect

    q = Question.objects.get(collection=demo, qid="SNOW-COUNTRY")
    login(page, live_server, "assessor1", "demo-assessor1")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/questions/{q.pk}/judge/")
    expect(page.locator("#legend")).to_contain_text("into synset")
    page.evaluate(COMPOSE, None)
    expect(page.locator("#key-hint")).to_contain_text("Japanese input (IME) is on")


def test_the_adjudication_pages_in_japanese(ja_page, live_server, adjudicated, artifacts):  # noqa: F811
    """The organizer's To adjudicate list and a question's adjudication page, in Japanese:
    the keys' help, the columns and the buttons (still one line a row at 1366 px)."""
    from playwright.sync_api import expect

    page, q = ja_page, adjudicated
    login(page, live_server, "organizer", "demo-organizer")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.locator("#mainnav").get_by_role("link", name="裁定待ち").click()
    expect(page.locator("h1")).to_have_text("裁定待ち")
    expect(page.locator("#adjudication-queue thead")).to_contain_text("未解決の文字列")
    page.locator("#adjudication-queue").get_by_role("link", name="裁定する").first.click()
    page.wait_for_url(f"{live_server.url}/questions/{q.pk}/adjudicate/")
    expect(page.locator("h1")).to_have_text("BEATLES の裁定")
    expect(page.locator("p.help")).to_contain_text("キー:")
    expect(page.locator("p.help")).to_contain_text("assessor1 の判定を採用")
    expect(page.locator("#adjudication thead")).to_contain_text("ゴールド")
    expect(page.locator("[data-row]:focus")).to_contain_text("McCartney")
    expect(page.locator("[data-row]:focus")).to_contain_text("不一致")
    page.screenshot(path=str(artifacts / "judge-ja-6-adjudicate.png"), full_page=True)
    text = page.evaluate(
        """() => {
          const copy = document.querySelector("main").cloneNode(true);
          copy.querySelectorAll("kbd, .qid, td:first-child, th, [hidden]")
            .forEach((el) => el.remove());
          document.body.appendChild(copy);
          const text = copy.innerText;
          copy.remove();
          return text;
        }"""
    )
    # the data: the collection's name, the question, the answer strings (in the synset
    # lists), the assessors
    data = "QAC demo Sakai examples Who was in the Beatles Lennon John McCartney Ringo Yoko"
    data += " assessor"
    assert _english_words(text) - set(data.split()) == set()
    lines = page.evaluate(
        """() => Array.from(document.querySelectorAll("#adjudication [data-row]")).map((tr) =>
          new Set(Array.from(tr.querySelectorAll("td:last-child button"))
            .map((b) => Math.round(b.getBoundingClientRect().top))).size)"""
    )
    assert lines and all(n == 1 for n in lines), lines
