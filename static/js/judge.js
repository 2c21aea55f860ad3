/* Keyboard-first judging.  Vanilla JS, no build step.
 *
 * With the focus on a candidate, one key judges it and moves the focus on; every
 * judgment is a POST of the hidden #keyform (htmx swaps in the refreshed workspace), and
 * the page's version and the string's state token go with it so a stale edit is refused
 * by the server.  Keys typed while a request is in flight are queued, not lost.  Keys
 * never fire in text fields or with a modifier key.
 *
 * Judging keys act on the focused item only.  When the last candidate is judged the focus
 * goes nowhere (never onto a string already in a synset): the page shows "all strings
 * judged" and judging keys change nothing until the assessor enters the strings explicitly
 * (a click, or j/k).  `d` (done and next) and Enter (next) act only when that state is on
 * the page when they are pressed, never as keys typed ahead while a judgment is in flight.
 *
 * With an input method (a Japanese IME) on, keys arrive as composition (isComposing, key
 * "Process", keyCode 229): they belong to the text being composed, never to a shortcut, and
 * Escape then cancels the composition without leaving the field.  A full-width character
 * (`３`, `ｎ`: the IME's full-width mode) means its ASCII key (NFKC).
 */
(() => {
  "use strict";
  // the page's language (Django's JavaScript catalog, /jsi18n/, loaded before this script);
  // English if it is missing
  const gettext = window.gettext || ((s) => s);
  let level = null;            // level code for the next judgments (null: the highest)
  let pending = null;          // {id, index} to focus once the new workspace is in
  let busy = false;
  let swapped = false;         // the answer to the request in flight is on the page
  let mergeArmed = false;
  const queue = [];

  const ws = () => document.getElementById("workspace");
  const items = () => Array.from(document.querySelectorAll("#workspace [data-item]"));
  const levels = () => (ws()?.dataset.levels || "").split(" ").filter(Boolean);
  const current = () => {
    const a = document.activeElement;
    return a && a.matches && a.matches("#workspace [data-item]") ? a : null;
  };

  function focusItem(el) {
    if (!el) return;
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
  }

  function move(delta) {
    const list = items();
    if (!list.length) return;
    const cur = current();
    let i = cur ? list.indexOf(cur) + delta : 0;
    i = Math.max(0, Math.min(list.length - 1, i));
    focusItem(list[i]);
  }

  function hint(text) {
    const el = document.getElementById("key-hint");
    if (el) el.textContent = text || "";
  }

  function showLevel() {
    const codes = levels();
    if (level && !codes.includes(level)) level = null;
    const el = document.getElementById("cur-level");
    if (el) el.textContent = level || codes[0] || "";
    markFocused();
  }

  /* the level the next key will use, on the focused candidate row (data-next-level, with
     its label data-next-label in the page's language, shown
     by app.css as a badge: no inline style, the CSP forbids it) */
  function markFocused() {
    document.querySelectorAll("#workspace [data-next-level]").forEach((x) => {
      delete x.dataset.nextLevel;
      delete x.dataset.nextLabel;
    });
    const cur = current();
    if (cur && cur.classList.contains("cand")) {
      cur.dataset.nextLevel = level || levels()[0] || "";
      cur.dataset.nextLabel = gettext("next:");
    }
  }

  /* where the focus goes after ``el`` is judged: the next item of the same kind */
  function after(el, stay) {
    const list = items();
    const index = list.indexOf(el);
    const cand = el.classList.contains("cand");
    if (stay) return { id: el.dataset.id, index, cand };
    const same = (x) => x.classList.contains("cand") === cand;
    const next = list.slice(index + 1).find(same) || list.slice(0, index).reverse().find(same);
    return { id: next ? next.dataset.id : null, index, cand };
  }

  /* the "all strings judged" state as the page shows it (rendered by the server) */
  const allJudged = () => document.getElementById("all-judged");

  function firstCandidate() {
    return document.querySelector("#workspace .cand");
  }

  function send(fields, focusAfter) {
    const form = document.getElementById("keyform");
    if (!form || ws().dataset.mayWrite !== "1") {
      hint(gettext("read only"));
      return;
    }
    form.querySelectorAll("input[data-k]").forEach((i) => i.remove());
    for (const [name, value] of Object.entries(fields)) {
      for (const v of [].concat(value)) {
        if (v === null || v === undefined) continue;
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = name;
        input.value = v;
        input.dataset.k = "1";
        form.appendChild(input);
      }
    }
    pending = focusAfter || null;
    busy = true;
    hint("…");
    form.requestSubmit();
  }

  function stringFields(el, extra) {
    return Object.assign({ string: el.dataset.id, expect: el.dataset.token }, extra);
  }

  function toggleLegend() {
    const full = document.getElementById("legend-full");
    if (full) full.hidden = !full.hidden;
  }

  function handle(key, cur) {
    if (key === "?") return toggleLegend();
    if (key === "j" || key === "ArrowDown") return move(1);
    if (key === "k" || key === "ArrowUp") return move(-1);
    if (key === "u") return send({ op: "undo" }, cur ? after(cur, true) : null);
    if (key === "d") {
      if (!allJudged()) return hint(gettext("judge every candidate first; then d marks the question done"));
      return send({ op: "done" }, null);
    }
    if (key === "Enter") {
      const link = document.getElementById("next-link");
      if (allJudged() && link) window.location.assign(link.href);
      return;
    }
    if (key === "t" || key === "/") {
      const input = document.getElementById("add-text");
      if (input) input.focus();
      return;
    }
    if (key === "Escape") {
      mergeArmed = false;
      return hint("");
    }
    const code = levels().find((c) => c.toLowerCase() === key.toLowerCase());
    if (!cur) {
      if (code) { level = code; showLevel(); }
      const done = allJudged();
      if (done && !code) hint(done.dataset.hint || "");
      return;
    }
    const member = Boolean(cur.dataset.synset);
    if (mergeArmed) {
      mergeArmed = false;
      hint("");
      if (member && /^[1-9]$/.test(key)) {
        return send({ op: "merge", ordinal: key, merge: cur.dataset.synset }, after(cur, true));
      }
      return;
    }
    if (/^[1-9]$/.test(key)) {
      return send(stringFields(cur, { op: "add", ordinal: key, level: member ? null : level }),
        after(cur, member));
    }
    if (key === "n") {
      const card = cur.closest(".synset");
      const ticked = card ? Array.from(card.querySelectorAll("input[name=strings]:checked")) : [];
      if (member && ticked.length) {
        const ids = new Set(ticked.map((i) => i.value).concat([cur.dataset.id]));
        return send({ op: "split", strings: Array.from(ids) }, after(cur, true));
      }
      return send(stringFields(cur, { op: "new", level: member ? cur.querySelector(".badge").textContent : level }),
        after(cur, member));
    }
    if (key === "x") return send(stringFields(cur, { op: "incorrect" }), after(cur, false));
    if (key === "r") return send(stringFields(cur, { op: "unjudge" }), after(cur, false));
    if (key === "m" && member) {
      mergeArmed = true;
      return hint(gettext("merge this synset into… (digit)"));
    }
    if (key === " " && member) {
      const box = cur.querySelector("input[name=strings]");
      if (box) box.checked = !box.checked;
      return;
    }
    if (key === "e") {
      const old = cur.querySelector(".text").textContent;
      const text = window.prompt(gettext("Edit the answer string"), old);
      if (text !== null && text.trim() && text !== old) {
        send(stringFields(cur, { op: "edit", text }), after(cur, true));
      }
      return;
    }
    if (key === "Delete") return send(stringFields(cur, { op: "delete" }), after(cur, false));
    if (code) {
      if (member) return send(stringFields(cur, { op: "level", level: code }), after(cur, true));
      level = code;
      showLevel();
    }
  }

  const HANDLED = /^([1-9]|[a-z]|\?|\/| |Escape|Delete|Enter|ArrowUp|ArrowDown)$/i;

  /* a key of the IME's composition: never a shortcut (keyCode 229 is what Safari and older
     Chrome send for the key that commits a composition, after compositionend) */
  let composing = false;
  document.addEventListener("compositionstart", () => { composing = true; }, true);
  document.addEventListener("compositionend", () => { composing = false; }, true);
  const imeKey = (e) => composing || e.isComposing || e.key === "Process" || e.keyCode === 229;
  /* full-width digits, letters and signs (U+FF01-FF5E, the ideographic space) as ASCII */
  const keyOf = (e) => (e.key && e.key.length === 1 ? e.key.normalize("NFKC") : e.key);

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || !ws()) return;
    const t = e.target;
    const inField = t && t.closest && t.closest("input, textarea, select, [contenteditable]");
    if (imeKey(e)) {
      if (!inField) hint(gettext("Japanese input (IME) is on: switch it off to judge (半角/全角 key; on a Mac 英数 or Ctrl+Space)"));
      return;
    }
    if (inField) {
      if (e.key === "Escape") t.blur();
      return;
    }
    const key = keyOf(e);
    if (!HANDLED.test(key)) return;
    if (key === "Enter" && t && t.closest && t.closest("a, button, summary")) return;
    e.preventDefault();
    if (busy) {
      // done / next typed ahead of a judgment in flight are dropped: they act only on the
      // state the page shows when they are pressed
      if (key.toLowerCase() === "d" || key === "Enter") {
        // ... unless the answer is in and shows "all strings judged" (htmx settles it a
        // moment later), with no other key waiting before it
        if (swapped && !queue.length && allJudged()) queue.push(key);
        else hint(key === "Enter" ? gettext("Enter ignored while saving; press it again") : gettext("d ignored while saving; press it again"));
        return;
      }
      queue.push(key);
      return;
    }
    handle(key, current());
  });

  function restore() {
    restoreGuidelines();
    busy = false;
    swapped = false;
    showLevel();
    const list = items();
    if (pending) {
      const el = pending.id && document.querySelector(`#workspace [data-item][data-id="${pending.id}"]`);
      if (pending.cand) {
        // after a candidate: the next candidate, else the first one, else nothing -- never
        // a string already judged, which a key typed ahead would silently change
        focusItem(el && el.classList.contains("cand") ? el : firstCandidate());
      } else {
        // after a string of a synset (the assessor chose to work there): stay close by
        focusItem(el || firstCandidate() || document.querySelector("#workspace .member")
          || list[Math.min(pending.index, list.length - 1)]);
      }
      pending = null;
    } else if (!current() && !document.activeElement?.closest?.("input, textarea, select")) {
      focusItem(firstCandidate());
    }
    const notice = document.querySelector("#workspace .notice");
    const done = allJudged();
    hint(notice ? gettext("refused — see the notice") : !current() && done ? done.dataset.hint : "");
    if (notice) queue.length = 0;  // the page changed under us: do not replay blind keys
    while (queue.length && !busy) handle(queue.shift(), current());
  }

  document.addEventListener("focusin", markFocused);

  /* the guidelines box open or closed as this user last left it */
  function guidelinesKey() {
    const box = document.getElementById("guidelines");
    return box ? [box, box.dataset.remember] : [null, null];
  }
  let restoredBox = null;      // toggles of a box not yet restored (just swapped in) are not the user's
  function restoreGuidelines() {
    const [box, key] = guidelinesKey();
    if (!box || !key || box === restoredBox) return;
    restoredBox = box;
    let stored = null;
    try { stored = window.localStorage.getItem(key); } catch (_) { /* storage off */ }
    if (stored !== null) box.open = stored === "1";
  }
  document.addEventListener("toggle", (e) => {
    const [box, key] = guidelinesKey();
    if (!box || e.target !== box || box !== restoredBox || !key) return;
    try { window.localStorage.setItem(key, box.open ? "1" : "0"); } catch (_) { /* off */ }
  }, true);

  document.addEventListener("htmx:afterSwap", (e) => {
    if (e.target && e.target.id === "workspace") {
      swapped = true;
      restoreGuidelines();
    }
  });
  document.addEventListener("htmx:afterSettle", (e) => {
    if (e.target && e.target.id === "workspace") restore();
  });
  document.addEventListener("htmx:afterRequest", (e) => {
    if (!e.detail.successful) {
      busy = false;
      queue.length = 0;
      hint(gettext("the request failed; reload the page"));
    }
  });
  document.addEventListener("DOMContentLoaded", () => {
    restoreGuidelines();
    showLevel();
    if (!current()) focusItem(firstCandidate());
    const done = allJudged();
    if (!current() && done) hint(done.dataset.hint);
  });
})();
