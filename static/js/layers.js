/* Keyboard for the adjudication page and an assessor's layer page.
 *
 * Rows are [data-row] elements (tabindex 0); j/k (or arrows) move between them.  A key
 * clicks the button of the focused row whose data-key is that key; keys on buttons
 * outside any row ([data-global-key]: undo, done) work anywhere.  After the POST the page
 * comes back with #s<id> in its address and the focus returns to that row.  Keys never
 * fire in text fields or with Ctrl/Alt/Meta.
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

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); move(1); return; }
    if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); move(-1); return; }
    const row = current();
    if (e.key === "Escape") { mergeFrom = null; showMark(); return; }
    if (e.key === "m" && row && row.dataset.mergeId && document.getElementById("merge-key-form")) {
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
    let button = scope.find((b) => b.dataset.key === e.key);
    if (!button) {
      button = Array.from(document.querySelectorAll("button[data-global-key]"))
        .find((b) => b.dataset.globalKey === e.key);
    }
    if (button && !button.disabled) { e.preventDefault(); button.click(); }
  });

  document.addEventListener("DOMContentLoaded", () => {
    const id = location.hash.slice(1);
    const el = id ? document.getElementById(id) : null;
    focusRow(el || rows()[0]);
  });
})();
