// The owner tabs' «Ещё» menu (templates/owner/base.html) is a <details>: the keyboard opens it
// with Enter or Space on its summary and Tab walks its links. This adds what a menu is expected to
// do besides: Escape closes it and gives the focus back to «Ещё»; a click or focus elsewhere closes it.
(function () {
  "use strict";
  function start() {
    document.querySelectorAll("details.more").forEach(function (menu) {
      var summary = menu.querySelector("summary");
      menu.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && menu.open) {
          menu.open = false;
          summary.focus();
        }
      });
      menu.addEventListener("focusout", function (event) {
        if (menu.open && event.relatedTarget && !menu.contains(event.relatedTarget)) { menu.open = false; }
      });
      document.addEventListener("click", function (event) {
        if (menu.open && !menu.contains(event.target)) { menu.open = false; }
      });
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
