/*
 * Operators' notes and handing a conversation over, in the inbox (docs/operator-protocol.md:
 * `note`, `transfer`). inbox.js sends on its socket (window.spravkaInbox.send) and tells every
 * frame it hears («spravka:inbox-frame» on document).
 *
 * What must stay true:
 * - A note's text goes in through textContent only; a note is drawn once (by its id), whether it
 *   came back on this socket or from another operator.
 * - A note being written is cleared only when the server has stored it: a refused one stays.
 */
(function () {
  "use strict";

  const hooks = {};
  const send = (frame) => (window.spravkaInbox ? window.spravkaInbox.send(frame) : false);
  const CURRENT = Number(document.body.getAttribute("data-conversation-id")) || null;
  const ME = Number(document.body.getAttribute("data-operator-id"));
  const T = () => JSON.parse((document.getElementById("inbox-texts") || {}).textContent || "{}");
  const transcript = () => document.getElementById("transcript");

  function hhmm(iso) {
    const lang = document.documentElement.lang || "ru";
    return new Intl.DateTimeFormat(lang, { hour: "2-digit", minute: "2-digit" }).format(new Date(iso));
  }

  function renderNote(n) {
    const item = document.createElement("div");
    item.className = "msg note";
    item.setAttribute("data-note-id", String(n.id));
    const head = document.createElement("span");
    head.className = "msg-who";
    head.textContent = T().note + " · " + String(n.author || "") + " · ";
    const time = document.createElement("time");
    time.setAttribute("datetime", String(n.created_at));
    time.textContent = hhmm(n.created_at);
    head.appendChild(time);
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.textContent = String(n.text || "");
    item.append(head, bubble);
    return item;
  }

  function placeNote(n) {
    const list = transcript();
    if (!list || !n || n.id == null || list.querySelector('[data-note-id="' + Number(n.id) + '"]')) return;
    const when = new Date(n.created_at).getTime();
    const after = Array.from(list.querySelectorAll(".msg time")).find((t) => new Date(t.getAttribute("datetime")).getTime() > when);
    const node = renderNote(n);
    if (after) list.insertBefore(node, after.closest(".msg"));
    else list.appendChild(node);
    list.scrollTop = list.scrollHeight;
  }

  hooks.transcript = (f) => { if (f.conversation_id === CURRENT) (f.notes || []).forEach(placeNote); };
  hooks.note = (f) => {
    if (f.conversation_id !== CURRENT) return;
    placeNote(f.note);
    const text = document.getElementById("note-text");
    if (text && f.note && text.value.trim() === f.note.text) text.value = "";
  };
  hooks.conversation = (f) => {
    const c = f.conversation;
    const form = document.getElementById("transfer");
    if (!c || c.id !== CURRENT || !form) return;
    form.hidden = !(c.state === "operator" && c.assigned_to && c.assigned_to.id === ME);
  };

  function onNote(e) {
    e.preventDefault();
    const text = document.getElementById("note-text");
    send({ type: "note", conversation_id: CURRENT, text: text.value });
  }

  function onTransfer(e) {
    e.preventDefault();
    const to = Number(document.getElementById("transfer-to").value);
    if (to) send({ type: "transfer", conversation_id: CURRENT, to: to });
  }

  document.addEventListener("spravka:inbox-frame", (e) => {
    const hook = e.detail && hooks[e.detail.type];
    if (hook) hook(e.detail);
  });
  document.addEventListener("DOMContentLoaded", () => {
    const note = document.getElementById("note-form");
    const transfer = document.getElementById("transfer");
    if (note) note.addEventListener("submit", onNote);
    if (transfer) transfer.addEventListener("submit", onTransfer);
    const text = document.getElementById("note-text");
    if (text) text.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) onNote(e); });
  });
})();
