/* The Menu button of narrow screens opens and closes the main navigation. */
(() => {
  "use strict";
  const button = document.getElementById("navbutton");
  if (!button) return;
  button.addEventListener("click", () => {
    const bar = button.closest(".topbar");
    const open = bar.classList.toggle("open");
    button.setAttribute("aria-expanded", String(open));
  });
})();
