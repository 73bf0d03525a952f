/*
 * Spravka inbox: the operator's «На месте» / «Отошёл(ла)» switch, and the minute pings that keep an
 * open tab's operator on hand (inbox/presence.py). Frames go through inbox.js's socket
 * (window.spravkaInbox.send); its frames reach here as "spravka:inbox-frame" events.
 */
(function () {
  "use strict";

  const PING_EVERY_MS = 60000;
  const button = document.getElementById("presence");
  const T = JSON.parse((document.getElementById("inbox-texts") || {}).textContent || "{}");

  function show(away) {
    if (!button) return;
    button.classList.toggle("is-away", away);
    button.setAttribute("aria-pressed", away ? "true" : "false");
    button.textContent = away ? T.away : T.present;
    button.title = away ? T.away_hint : T.present_hint;
  }

  function send(frame) {
    return Boolean(window.spravkaInbox && window.spravkaInbox.send(frame));
  }

  let pressed = null; // a press before the socket was ready: sent once the server says where we are

  document.addEventListener("spravka:inbox-frame", (e) => {
    const frame = e.detail;
    if (!frame || frame.type !== "presence") return;
    if (pressed !== null && pressed !== Boolean(frame.away) && send({ type: "presence", away: pressed })) {
      pressed = null;
      return; // the answer to this frame shows it
    }
    pressed = null;
    show(Boolean(frame.away));
  });
  if (button) {
    button.addEventListener("click", () => {
      const away = button.getAttribute("aria-pressed") !== "true";
      show(away);
      if (!send({ type: "presence", away: away })) pressed = away;
    });
  }
  setInterval(() => send({ type: "ping" }), PING_EVERY_MS);
})();
