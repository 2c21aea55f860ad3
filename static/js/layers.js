/* Keyboard for the adjudication page and an assessor's layer page.
 *
 * Rows are [data-row] elements (tabindex 0); j/k (or arrows) move between them.  A key
 * clicks the button of the focused row whose data-key is that key; keys on buttons
 * outside any row ([data-global-key]: undo, done) work anywhere.  After the POST the page
 * comes back with #s<id> in its address and the focus returns to that row; on arrival it
 * is on the first row the layers differ on.  Keys never fire in text fields or with
 * Ctrl/Alt/Meta, nor during an input method's composition (isComposing, key "Process",
 * keyCode 229: a Japanese IME on); a full-width key (`３`, `ｘ`, `［`) means its ASCII one
 * (NFKC).
 *
 * Merge (adjudication): `m` on a row whose gold synset is known (data-merge-id) marks
 * that synset; `m` on a row of another synset merges the two with #merge-key-form
 * (the first one marked keeps its number); Escape forgets the mark.
 */
(() => {
  "use strict";
  const rows = () => Array.from(document.querySelectorAll("[data-row]"));
  let mergeFrom = null;   // gold synset marked with `m`, waiting for the second one

  function showMark() {
    for (const r of rows()) r.classList.toggle("merge-from", !!mergeFrom && r.dataset.mergeId === mergeFrom);
    const note = document.getElementById("merge-note");
    if (note) note.hidden = !mergeFrom;
  }
  const current = () => document.activeElement?.closest?.("[data-row]") || null;

  function focusRow(el) {
    if (!el) return;
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
  }

  function move(delta) {
    const list = rows();
    if (!list.length) return;
    const i = list.indexOf(current());
    focusRow(list[Math.max(0, Math.min(list.length - 1, i < 0 ? 0 : i + delta))]);
  }

  /* keys of an IME composition are never shortcuts */
  let composing = false;
  document.addEventListener("compositionstart", () => { composing = true; }, true);
  document.addEventListener("compositionend", () => { composing = false; }, true);

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    if (composing || e.isComposing || e.key === "Process" || e.keyCode === 229) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const key = e.key && e.key.length === 1 ? e.key.normalize("NFKC") : e.key;  // full-width as ASCII
    if (key === "j" || key === "ArrowDown") { e.preventDefault(); move(1); return; }
    if (key === "k" || key === "ArrowUp") { e.preventDefault(); move(-1); return; }
    const row = current();
    if (key === "Escape") { mergeFrom = null; showMark(); return; }
    if (key === "m" && row && row.dataset.mergeId && document.getElementById("merge-key-form")) {
      e.preventDefault();
      if (!mergeFrom || mergeFrom === row.dataset.mergeId) {
        mergeFrom = row.dataset.mergeId;
        showMark();
        return;
      }
      const form = document.getElementById("merge-key-form");
      form.querySelector("[name=synsets][data-first]").value = mergeFrom;
      form.querySelector("[name=synsets][data-second]").value = row.dataset.mergeId;
      form.querySelector("[name=string]").value = row.id.slice(1);
      form.submit();
      return;
    }
    const scope = row ? Array.from(row.querySelectorAll("button[data-key]")) : [];
    let button = scope.find((b) => b.dataset.key === key);
    if (!button) {
      button = Array.from(document.querySelectorAll("button[data-global-key]"))
        .find((b) => b.dataset.globalKey === key);
    }
    if (button && !button.disabled) { e.preventDefault(); button.click(); }
  });

  document.addEventListener("DOMContentLoaded", () => {
    const id = location.hash.slice(1);
    const el = id ? document.getElementById(id) : null;
    // else the first row still to resolve: the layers differ on it and gold has no judgment
    const differs = document.querySelector("[data-row].differs:not(.resolved)")
      || document.querySelector("[data-row].differs");
    focusRow(el || differs || rows()[0]);
  });
})();
