// Copy buttons for code to paste (the widget snippet): <button data-copy="ID" data-status="ID"
// data-copied="…" data-selected="…">. Where the Clipboard API is unavailable (plain http, an old
// browser) or refuses, the code is selected instead and the status asks for Ctrl+C.
(function () {
  "use strict";
  function wire(button) {
    var code = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-status"));
    if (!code) { return; }
    function say(text) { if (status) { status.textContent = text; } }
    function selectCode() {
      var range = document.createRange();
      range.selectNodeContents(code);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      say(button.getAttribute("data-selected"));
    }
    button.addEventListener("click", function () {
      if (!navigator.clipboard || !window.isSecureContext) { return selectCode(); }
      navigator.clipboard.writeText(code.textContent).then(function () {
        say(button.getAttribute("data-copied"));
      }, selectCode);
    });
  }
  function start() { document.querySelectorAll("button[data-copy]").forEach(wire); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
