/* The Menu button of narrow screens opens and closes the main navigation; Escape closes it
   and puts the focus back on the button. */
(() => {
  "use strict";
  const button = document.getElementById("navbutton");
  if (!button) return;
  const bar = button.closest(".topbar");
  const show = (open) => {
    bar.classList.toggle("open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", () => show(!bar.classList.contains("open")));
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !bar.classList.contains("open")) return;
    show(false);
    button.focus();
  });
})();
