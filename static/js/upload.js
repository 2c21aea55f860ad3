// Run upload: a progress bar while the file is sent (htmx:xhr:progress), then a
// "processing" state; a file over the size limit is stopped before it is sent.  Its words
// come from the /jsi18n/ catalog the page loads first (English without it).
(function () {
  "use strict";
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (fmt, obj) {
    return fmt.replace(/%\((\w+)\)s/g, function (m, name) { return String(obj[name]); });
  };
  document.body.addEventListener("htmx:configRequest", function (e) {
    var form = e.target.closest && e.target.closest("#upload-form");
    if (!form) return;
    var input = form.querySelector("input[type=file]");
    var limit = parseInt(form.dataset.maxBytes, 10);
    if (input && input.files[0] && input.files[0].size > limit) {
      e.preventDefault();
      document.getElementById("upload-note").textContent = interpolate(
        gettext("This file is %(size)s MB; runs may be at most %(limit)s MB."),
        { size: (input.files[0].size / 1048576).toFixed(1), limit: limit / 1048576 }, true);
    }
  });
  document.body.addEventListener("htmx:xhr:progress", function (e) {
    var bar = document.getElementById("upload-progress");
    var note = document.getElementById("upload-note");
    if (!bar || !e.detail.lengthComputable) return;
    bar.hidden = false;
    var pct = Math.round(e.detail.loaded * 100 / e.detail.total);
    bar.value = pct;
    note.textContent = pct < 100
      ? interpolate(gettext("Uploading… %(percent)s"), { percent: pct + "%" }, true)
      : gettext("Processing: checking and storing the run…");
    if (pct >= 100) bar.removeAttribute("value");
  });
})();
