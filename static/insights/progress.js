/* A run's progress bar (insights/set.html): polls the run's progress URL every second and reloads
   the page when the run has finished, so the answers and their diff appear on their own. */
(function () {
  "use strict";
  var box = document.querySelector("[data-progress-url]");
  if (!box) { return; }
  var bar = box.querySelector("progress");
  var label = box.querySelector(".progress-label");
  var url = box.getAttribute("data-progress-url");
  var failures = 0;
  function poll() {
    fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"})
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (data) {
        failures = 0;
        bar.max = Math.max(1, data.total);
        bar.value = data.done;
        label.textContent = label.textContent.replace(/\d+(\D+)\d+/, data.done + "$1" + data.total);
        if (data.status === "done" || data.status === "failed") { window.location.reload(); return; }
        window.setTimeout(poll, 1000);
      })
      .catch(function () {
        failures += 1;
        window.setTimeout(poll, Math.min(10000, 1000 * Math.pow(2, failures)));
      });
  }
  window.setTimeout(poll, 700);
})();
