// The setup page: copy the widget snippet (selecting it where the Clipboard API is unavailable, as
// on plain http), and show a finished crawl's summary, which admin-progress.js does not redraw.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("copy-snippet");
    var code = document.getElementById("snippet-code");
    var status = document.getElementById("copy-status");
    function selectSnippet() {
      var range = document.createRange();
      range.selectNodeContents(code);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      status.textContent = button.getAttribute("data-selected");
    }
    if (button) {
      button.addEventListener("click", function () {
        if (!navigator.clipboard || !window.isSecureContext) { return selectSnippet(); }
        navigator.clipboard.writeText(code.textContent).then(function () {
          status.textContent = button.getAttribute("data-copied");
        }, selectSnippet);
      });
    }
    document.querySelectorAll(".spravka-progress").forEach(function (box) {
      new MutationObserver(function () {
        var state = box.getAttribute("data-status");
        if (state !== "done" && state !== "failed") { return; }
        fetch(box.getAttribute("data-url"), { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.json() : null; })
          .then(function (data) { if (data) { box.querySelector(".spravka-progress-message").textContent = data.message; } });
      }).observe(box, { attributes: true, attributeFilter: ["data-status"] });
    });
  });
})();
