// Live progress bars for crawls and imports in the admin: poll each unfinished run every 2 s.
// Three counts move separately: pages fetched, pages searchable by words (stored), pages with
// vectors (searchable by meaning too; filled in behind the crawl by the embed queue).
(function () {
  "use strict";
  var ACTIVE = { queued: true, running: true, embedding: true };

  function update(box, data) {
    var bar = box.querySelector("progress");
    var label = box.querySelector(".spravka-progress-label");
    box.setAttribute("data-status", data.status);
    bar.value = data.percent;
    bar.textContent = data.percent + "%";
    var text = data.percent + "% · " + data.status_display;
    if (data.pages_total) { text += " · " + data.pages_done + "/" + data.pages_total; }
    label.textContent = text;
    var counts = { fetched: data.pages_done, indexed: data.pages_indexed, embedded: data.pages_embedded };
    Object.keys(counts).forEach(function (name) {
      var row = box.querySelector('[data-count="' + name + '"]');
      if (!row || counts[name] === undefined) { return; }
      var meter = row.querySelector("meter");
      meter.max = Math.max(data.pages_total || 0, 1);
      meter.value = counts[name];
      row.querySelector("span").textContent = counts[name];
    });
  }

  function poll(box) {
    fetch(box.getAttribute("data-url"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        update(box, data);
        if (ACTIVE[data.status]) { setTimeout(function () { poll(box); }, 2000); }
      })
      .catch(function () { setTimeout(function () { poll(box); }, 5000); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".spravka-progress").forEach(function (box) {
      if (ACTIVE[box.getAttribute("data-status")]) { poll(box); }
    });
  });
})();
