/*
 * Canned replies in the inbox composer: «/» and a few letters list the bot's replies (already
 * filled in for this conversation by the server); arrows move, Enter or Tab puts the reply in the
 * composer, Esc closes. The text stays editable; the reply's id rides with the message so its use
 * is counted when sent (inbox.js, submitReply).
 *
 * What must stay true:
 * - Replies go in through textContent and the textarea's value only, never innerHTML.
 * - While the menu is open, Enter picks a reply and never sends the message.
 */
(function () {
  "use strict";

  const data = document.getElementById("inbox-canned");
  const form = document.getElementById("reply");
  const text = document.getElementById("reply-text");
  const menu = document.getElementById("canned-menu");
  if (!data || !form || !text || !menu) return;
  const REPLIES = JSON.parse(data.textContent || "[]");
  const T = JSON.parse((document.getElementById("inbox-texts") || {}).textContent || "{}");
  const TOKEN = /(^|\s)\/([\p{L}\p{N}_-]*)$/u;
  const state = { items: [], active: 0, start: -1 };

  function query() {
    const before = text.value.slice(0, text.selectionStart);
    const m = TOKEN.exec(before);
    if (!m) return null;
    state.start = before.length - m[2].length - 1;
    return m[2].toLowerCase();
  }

  function matches(q) {
    return REPLIES.filter((r) => r.shortcut.toLowerCase().startsWith(q) || r.title.toLowerCase().includes(q)).slice(0, 8);
  }

  function close() {
    menu.hidden = true;
    menu.textContent = "";
    state.items = [];
    text.removeAttribute("aria-activedescendant");
  }

  function option(r, i) {
    const li = document.createElement("li");
    li.id = "canned-" + r.id;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(i === state.active));
    const head = document.createElement("b");
    head.textContent = "/" + r.shortcut + " — " + r.title;
    const body = document.createElement("span");
    body.textContent = r.text.length > 90 ? r.text.slice(0, 89) + "…" : r.text;
    li.append(head, body);
    li.addEventListener("mousedown", (e) => { e.preventDefault(); pick(r); });
    return li;
  }

  function render(q) {
    menu.textContent = "";
    if (!state.items.length) {
      const li = document.createElement("li");
      li.className = "canned-none";
      li.textContent = String(T.canned_empty || "").replace("{q}", q);
      menu.appendChild(li);
    }
    state.items.forEach((r, i) => menu.appendChild(option(r, i)));
    menu.hidden = false;
    const current = state.items[state.active];
    if (current) text.setAttribute("aria-activedescendant", "canned-" + current.id);
  }

  function update() {
    if (!text.value) delete text.dataset.cannedId;
    const q = query();
    if (q === null) return close();
    state.items = matches(q);
    state.active = 0;
    render(q);
  }

  function pick(r) {
    const end = text.selectionStart;
    text.value = text.value.slice(0, state.start) + r.text + text.value.slice(end);
    const caret = state.start + r.text.length;
    text.setSelectionRange(caret, caret);
    text.dataset.cannedId = String(r.id);
    close();
    text.focus();
  }

  function onKey(e) {
    if (e.target !== text || menu.hidden) return;
    const n = state.items.length;
    if (e.key === "Escape") close();
    else if ((e.key === "ArrowDown" || e.key === "ArrowUp") && n) {
      state.active = (state.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
      render("");
    } else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey && n) pick(state.items[state.active]);
    else return;
    e.preventDefault();
    e.stopPropagation(); // before inbox.js's own Enter, which would send
  }

  form.addEventListener("keydown", onKey, true);
  text.addEventListener("input", update);
  text.addEventListener("blur", () => setTimeout(close, 150));
})();
