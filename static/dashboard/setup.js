// The setup page: show a finished crawl's summary, which admin-progress.js does not redraw. The
// snippet's copy button is static/owner/snippet-copy.js.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
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
