"""Every page of every role at phone width (390 px), over the walk's page list
(test_walk._pages): no table cell is narrower than its longest word, so a number such as
0.8062 or a word such as "participant" is never broken one character per line; a wide table
scrolls inside its own box instead, and the page itself never scrolls sideways."""

from __future__ import annotations

import pytest

from .conftest import login
from .test_walk import PASSWORDS, _pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# For each visible td/th: its content width (clientWidth less the padding) against the
# natural width of its longest unbreakable token (text split at spaces, after a hyphen
# before a letter, and around each CJK character, where a browser may break a line),
# measured as a nowrap span inside the token's own element (so in its very font); and
# whether any token's own line boxes sit on more than one line (a token broken mid-word).
# Text out of the flow (position absolute, such as .sr-only) or not rendered (display
# none, a closed <details>) and the options of a <select> are left out.  With ``words``
# (the Japanese sweep, test_tables_phone_ja.py) a run of CJK characters is split into its
# words (Intl.Segmenter's dictionary) instead of single characters: "判定者" broken one
# character per line is as crushed as "participant" is.
CRUSHED_CELLS = """(words) => {
  const cjk = /([\\u2e80-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\uff00-\\uffef])/g;
  const segmenter = words ? new Intl.Segmenter("ja", { granularity: "word" }) : null;
  const cjkRun = new RegExp(cjk.source.slice(1, -1) + "+", "g");
  const wordsOf = (run) => [...segmenter.segment(run)].map((s) => s.segment).join(" ");
  const split = (text) => words
    ? text.replace(cjkRun, (run) => ` ${wordsOf(run)} `)
    : text.replace(cjk, " $1 ");
  const out = [];
  for (const cell of document.querySelectorAll("td, th")) {
    if (!cell.getClientRects().length) continue;
    const cs = getComputedStyle(cell);
    const inner = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const nodes = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.data.trim() || el.closest("select, textarea, script, style, template")) continue;
      if (!el.getClientRects().length) continue;
      let flows = true;
      for (let e = el; e && e !== cell; e = e.parentElement) {
        if (["absolute", "fixed"].includes(getComputedStyle(e).position)) flows = false;
      }
      if (flows) nodes.push(node);
    }
    let longest = "", longestWidth = 0, broken = "";
    for (const node of nodes) {
      const probe = document.createElement("span");
      probe.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap;left:0;top:0";
      node.parentElement.appendChild(probe);
      const text = split(node.data).replace(/-(?=\\p{L})/gu, "- ");
      for (const token of new Set(text.split(/\\s+/))) {
        if (!token) continue;
        probe.textContent = token;
        const width = probe.getBoundingClientRect().width;
        if (width > longestWidth) { longest = token; longestWidth = width; }
      }
      probe.remove();
      // a token's own boxes on two lines: it was broken mid-word
      const re = /\\S+/g;
      let m;
      while (!broken && (m = re.exec(node.data)) !== null) {
        if (/[\\u2e80-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\uff00-\\uffef-]/.test(m[0])) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) broken = m[0];
      }
    }
    if (longestWidth > inner + 0.5 || broken) {
      const table = cell.closest("table");
      out.push({
        cell: (table.id || table.className) + " " + cell.tagName,
        token: broken || longest,
        token_px: Math.round(longestWidth),
        cell_px: Math.round(inner),
      });
    }
  }
  return out;
}"""

PAGE_SCROLL = "document.documentElement.scrollWidth - window.innerWidth"


def _measure(page, url: str, problems: list[str], words: bool = False) -> int:
    """Check the page as it is shown (every <details> opened): the crushed cells it has,
    each problem appended to ``problems`` (``words``: CJK text split into words)."""
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    cells = page.evaluate(CRUSHED_CELLS, words)
    if cells:
        total = page.evaluate("document.querySelectorAll('td, th').length")
        sample = "; ".join(
            f"{c['cell']} {c['token']!r} {c['token_px']}px in {c['cell_px']}px" for c in cells[:3]
        )
        problems.append(f"{url}: {len(cells)} of {total} cells crushed ({sample})")
    extra = page.evaluate(PAGE_SCROLL)
    if extra > 0:
        problems.append(f"{url}: the page scrolls sideways by {extra}px")
    return len(cells)


# a judgments file whose preview lists the strings it adds and the spellings it folds
JUDGMENTS = (
    "question_id,synset_id,answer,level\n"
    "EX1-BEATLES,1,John Winston Ono Lennon,S\n"
    "EX1-BEATLES,1,john winston ono lennon,S\n"
    "EX1-BEATLES,2,Sir James Paul McCartney,A\n"
)


@pytest.mark.parametrize("role", list(PASSWORDS))
def test_tables_are_readable_at_phone_width(browser, live_server, demo, agreement, role, tmp_path):
    context = browser.new_context(viewport={"width": 390, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    crushed_total = pages_crushed = 0
    pages = _pages(role, demo, agreement)
    try:
        login(page, live_server, role, PASSWORDS[role])
        page.wait_for_url(f"{live_server.url}/collections/")
        for url in pages:
            page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            crushed = _measure(page, url, problems)
            crushed_total += crushed
            pages_crushed += bool(crushed)
        if role == "organizer":  # the preview of an import, a page of its own
            upload = tmp_path / "judgments.csv"
            upload.write_text(JUDGMENTS, encoding="utf-8")
            page.goto(f"{live_server.url}/collections/demo/import/")
            page.select_option("select[name=kind]", "judgments")
            page.set_input_files("input[name=file]", str(upload))
            page.click("form.card button[type=submit]")
            page.wait_for_selector("#preview table")
            crushed = _measure(page, "import preview", problems)
            crushed_total += crushed
            pages_crushed += bool(crushed)
            pages.append("import preview")
    finally:
        context.close()
    summary = f"{role}: {crushed_total} crushed cells on {pages_crushed} of {len(pages)} pages"
    print(summary)
    assert not problems, summary + "\n" + "\n".join(problems)
