// Live progress bars for crawls and imports in the admin: poll each unfinished run every 2 s.
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
