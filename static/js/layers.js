/* Keyboard for the adjudication page and an assessor's layer page (issue 13).
 *
 * Rows are [data-row] elements (tabindex 0); j/k (or arrows) move between them.  A key
 * clicks the button of the focused row whose data-key is that key; keys on buttons
 * outside any row ([data-global-key]: undo, done) work anywhere.  After the POST the page
 * comes back with #s<id> in its address and the focus returns to that row.  Keys never
 * fire in text fields or with Ctrl/Alt/Meta.
 */
(() => {
  "use strict";
  const rows = () => Array.from(document.querySelectorAll("[data-row]"));
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
