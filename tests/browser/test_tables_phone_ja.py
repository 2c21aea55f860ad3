"""The phone sweep of test_tables_phone.py in Japanese (issue 25): a browser that asks for
Japanese (locale ja-JP, ``Accept-Language: ja``) opens every page of every role (the walk's
page list, test_walk._pages) at 390 px: no table cell narrower than its longest word, no
page-level horizontal scroll.  Japanese has no spaces and a browser may break a line
between any two of its characters, so a narrow column shows 判定者 or 受付中 one character
per line: here a run of CJK characters counts as its words (Intl.Segmenter's dictionary:
判定|者, あなた|の|役割), each of which has to fit, as "participant" or 0.8062 does.

The same pages at 1366 px: no button, menu link or table header overflows its box
(scrollWidth > clientWidth + 1), and no menu link or short button label (up to 12
characters, such as 絞り込む or 完了して次へ) is broken over two lines.

Every page is visited at both widths, no subset: one context per role whose viewport is
resized on each page, so the 50 pages of the three roles (and the organizer's import
preview, checked at 390 px) cost one more layout each, not a login or a reload, and the
sweep takes about as long as the English one (about a minute).  Screenshots of four pages
at 390 px (judging, runs, compare, collections) go to test-artifacts/ (tables-ja-*.png)."""

from __future__ import annotations

import pytest

from .conftest import login
from .test_tables_phone import JUDGMENTS, _measure
from .test_walk import PASSWORDS, _pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# At 1366 px: buttons, menu links and table headers whose content is wider than their box
# (text cut off or spilling over its border), and menu links and short button labels whose
# text runs over more than one line (a label of a few Japanese characters broken between
# two of them).  Hidden elements (no box) and screen-reader-only ones are left out.
OVERFLOWING = """() => {
  const out = [];
  const selector = "button, a.button, input[type=submit], nav a, .langswitch button, th, legend";
  for (const el of document.querySelectorAll(selector)) {
    if (!el.getClientRects().length || el.closest(".sr-only, [hidden]")) continue;
    const cs = getComputedStyle(el);
    const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "");
    const text = (el.innerText || el.value || "").trim().replace(/\\s+/g, " ");
    if (cs.display !== "inline" && el.scrollWidth > el.clientWidth + 1) {
      const sizes = `${el.scrollWidth}px in ${el.clientWidth}px`;
      out.push(`${name} ${JSON.stringify(text)} overflows: ${sizes}`);
      continue;
    }
    const short = el.matches("nav a, button, a.button") && text.length && text.length <= 12;
    if (!short) continue;
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.bottom);
    tops.sort((a, b) => a - b);
    let lines = tops.length ? 1 : 0;
    for (let i = 1; i < tops.length; i++) if (tops[i] - tops[i - 1] > 4) lines++;
    if (lines > 1) out.push(`${name} ${JSON.stringify(text)} runs over ${lines} lines`);
  }
  return [...new Set(out)];
}"""

# the pages whose screenshot (390 px, Japanese) goes to test-artifacts/
SHOTS = {
    "assessor1": {"/collections/": "collections"},
    "organizer": {"/collections/demo/runs/": "runs", "compare": "compare", "judge": "judge"},
}


def _shot_name(role: str, url: str) -> str | None:
    shots = SHOTS.get(role, {})
    if url in shots:
        return shots[url]
    if "/compare/" in url:
        return shots.get("compare")
    if url.endswith("/judge/"):
        return shots.get("judge")
    return None


@pytest.mark.parametrize("role", list(PASSWORDS))
def test_japanese_pages_fit_at_phone_and_laptop_width(
    browser, live_server, demo, agreement, role, tmp_path, artifacts
):
    context = browser.new_context(
        viewport={"width": 390, "height": 860},
        locale="ja-JP",
        extra_http_headers={"Accept-Language": "ja"},
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    crushed_total = pages_crushed = 0
    pages = _pages(role, demo, agreement)
    shot = set()
    try:
        login(page, live_server, role, PASSWORDS[role])
        page.wait_for_url(f"{live_server.url}/collections/")
        assert page.locator("html").get_attribute("lang") == "ja"
        for url in pages:
            page.set_viewport_size({"width": 390, "height": 860})
            page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            name = _shot_name(role, url)
            if name and name not in shot:
                shot.add(name)
                page.screenshot(path=str(artifacts / f"tables-ja-{name}-390.png"), full_page=True)
            crushed = _measure(page, url, problems, words=True)
            crushed_total += crushed
            pages_crushed += bool(crushed)
            page.set_viewport_size({"width": 1366, "height": 900})
            page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            problems += [f"{url} at 1366px: {p}" for p in page.evaluate(OVERFLOWING)]
        if role == "organizer":  # the preview of an import, a page of its own
            page.set_viewport_size({"width": 390, "height": 860})
            upload = tmp_path / "judgments.csv"
            upload.write_text(JUDGMENTS, encoding="utf-8")
            page.goto(f"{live_server.url}/collections/demo/import/")
            page.select_option("select[name=kind]", "judgments")
            page.set_input_files("input[name=file]", str(upload))
            page.click("form.card button[type=submit]")
            page.wait_for_selector("#preview table")
            crushed = _measure(page, "import preview", problems, words=True)
            crushed_total += crushed
            pages_crushed += bool(crushed)
            pages.append("import preview")
    finally:
        context.close()
    summary = f"{role} (ja): {crushed_total} crushed cells on {pages_crushed} of {len(pages)} pages"
    print(summary)
    assert not problems, summary + "\n" + "\n".join(problems)
