/*
 * Spravka operators' inbox: makes the server-rendered page live over /ws/inbox/
 * (docs/operator-protocol.md). No framework, no build step, like the widget.
 *
 * What must stay true:
 * - Text from visitors goes in through textContent only, never innerHTML.
 * - An operator message gets its client_msg_id once and keeps it through reconnects (kept in
 *   sessionStorage until acked), so a resend is deduplicated by the server, never doubled.
 * - A row lives in exactly one list: waiting (longest wait first), mine, recent.
 */
(function () {
  "use strict";

  const body = document.body;
  const ME = Number(body.getAttribute("data-operator-id"));
  const CURRENT = Number(body.getAttribute("data-conversation-id")) || null;
  const T = JSON.parse((document.getElementById("inbox-texts") || {}).textContent || "{}");
  const BASE_TITLE = document.title;
  const RECENT_MAX = 50;
  const MAX_BACKOFF_MS = 30000;
  const TYPING_EVERY_MS = 3000;
  const TYPING_IDLE_MS = 4000;
  const PENDING_KEY = "spravka:inbox:pending";

  const lists = {
    waiting: document.getElementById("waiting"),
    mine: document.getElementById("mine"),
    recent: document.getElementById("recent"),
  };
  const ui = {
    count: document.getElementById("waiting-count"),
    conn: document.getElementById("connection"),
    notifyBtn: document.getElementById("enable-notifications"),
    transcript: document.getElementById("transcript"),
    reply: document.getElementById("reply"),
    text: document.getElementById("reply-text"),
    notice: document.getElementById("notice"),
    stateBadge: document.getElementById("chat-state"),
    holder: document.getElementById("chat-holder"),
    visitor: document.getElementById("chat-visitor"),
  };

  const state = {
    ws: null,
    welcomed: false,
    attempt: 0,
    timer: 0,
    conversations: new Map(), // id -> Conversation JSON as last heard
    waitingSeen: new Set(), // ids already announced as waiting
    typingSentAt: 0,
    actions: [], // take / release / close pressed before the socket was ready: sent once it is
    typingIdle: 0,
    noticeTimer: 0,
    audio: null,
  };

  /* ---------- helpers ---------- */

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = String(text);
    return node;
  }

  function fmt(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (_, key) => (values[key] == null ? "" : String(values[key])));
  }

  function uuid() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    const buf = new Uint8Array(16);
    window.crypto.getRandomValues(buf);
    return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function minutesSince(iso) {
    return Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 60000));
  }

  // Times in the page's language (<html lang>), as the server renders them: "09:05" / "09:05 AM".
  const TIME_FORMAT = new Intl.DateTimeFormat(document.documentElement.lang || "ru", { hour: "2-digit", minute: "2-digit" });

  function hhmm(iso) {
    return TIME_FORMAT.format(new Date(iso));
  }

  function pendingAll() {
    try {
      const list = JSON.parse(window.sessionStorage.getItem(PENDING_KEY) || "[]");
      return Array.isArray(list) ? list : [];
    } catch (e) {
      return [];
    }
  }

  function savePending(list) {
    try { window.sessionStorage.setItem(PENDING_KEY, JSON.stringify(list)); } catch (e) { /* memory only */ }
  }

  /* ---------- the queue ---------- */

  function listFor(c) {
    if (c.state === "waiting_operator") return "waiting";
    if (c.state === "operator" && c.assigned_to && c.assigned_to.id === ME) return "mine";
    return "recent";
  }

  // The server names the visitor (core/labels.py), in this page's language: the name they left,
  // else when they started writing; never their id.
  function visitorLabel(c) {
    return (c.visitor && (c.visitor.label || c.visitor.name)) || T.visitor;
  }

  function timeLabel(c) {
    if (c.state === "waiting_operator" && c.waiting_since) {
      const n = minutesSince(c.waiting_since);
      return n ? fmt(T.waits, { n: n }) : T.waits_now;
    }
    const last = c.last_message && c.last_message.created_at;
    return last ? hhmm(last) : "";
  }

  // Past the bot's promised first reply (its sla_minutes), a waiting row says so in words and stands out.
  function lateText(c) {
    const sla = Number(c.bot && c.bot.sla_minutes) || 0;
    if (c.state !== "waiting_operator" || !c.waiting_since || !sla) return "";
    return Date.now() - Date.parse(c.waiting_since) > sla * 60000 ? fmt(T.late, { n: sla }) : "";
  }

  function markLate(row, c) {
    const text = lateText(c);
    const late = row.querySelector(".conv-late");
    if (text) row.setAttribute("data-late", "true");
    else row.removeAttribute("data-late");
    if (late) {
      late.textContent = text;
      late.hidden = !text;
    }
  }

  function renderRow(c) {
    const row = el("a", "conv" + (c.unread ? " has-unread" : ""));
    row.href = "/inbox/c/" + Number(c.id) + "/";
    row.setAttribute("data-id", String(c.id));
    row.setAttribute("data-state", String(c.state));
    if (c.waiting_since) row.setAttribute("data-waiting-since", String(c.waiting_since));
    if (c.id === CURRENT) row.setAttribute("aria-current", "page");
    const top = el("span", "conv-top");
    const who = el("span", "conv-who");
    if (c.channel && c.channel !== "widget") {  // a messenger's conversation: its badge before the name
      const badge = el("span", "conv-channel", (T.channels && T.channels[c.channel]) || c.channel);
      badge.setAttribute("data-channel", String(c.channel));
      who.append(badge, " ");
    }
    who.append(visitorLabel(c));
    top.append(who, el("span", "conv-time", timeLabel(c)));
    const holder = c.state === "operator" && c.assigned_to ? " · " + c.assigned_to.name : "";
    const preview = (c.last_message && c.last_message.text) || "";
    const unread = el("span", "conv-unread", c.unread || "");
    unread.hidden = !c.unread;
    row.append(top, el("span", "conv-bot", (c.bot && c.bot.name) + holder), el("span", "conv-late"),
      el("span", "conv-preview", preview.length > 90 ? preview.slice(0, 89) + "…" : preview), unread);
    markLate(row, c);
    return row;
  }

  function rowOf(id) {
    return document.querySelector('.conv[data-id="' + Number(id) + '"]');
  }

  // Waiting: longest wait first; mine and recent: latest activity first.
  function sortKey(listName) {
    return (x) => (listName === "waiting" ? Date.parse(x.waiting_since || 0) : -Date.parse(
      (x.last_message && x.last_message.created_at) || 0));
  }

  function insertSorted(listName, row, c) {
    const list = lists[listName];
    if (!list) return;
    const key = sortKey(listName);
    const mine = key(c);
    for (const other of list.querySelectorAll(".conv")) {
      const known = state.conversations.get(Number(other.getAttribute("data-id")));
      if (known && key(known) > mine) {
        list.insertBefore(row, other);
        return;
      }
    }
    list.insertBefore(row, list.querySelector("[data-empty]"));
  }

  function refreshEmpty() {
    Object.values(lists).forEach((list) => {
      if (!list) return;
      const empty = list.querySelector("[data-empty]");
      if (empty) empty.hidden = !!list.querySelector(".conv");
    });
    const recent = lists.recent ? lists.recent.querySelectorAll(".conv") : [];
    for (let i = RECENT_MAX; i < recent.length; i++) recent[i].remove();
    updateCount();
  }

  function upsertConversation(c) {
    const wasWaiting = state.waitingSeen.has(c.id);
    const known = state.conversations.get(c.id);
    // An event without a new message (a state change, a system note) keeps the preview it had.
    if (!c.last_message && known) c.last_message = known.last_message;
    state.conversations.set(c.id, c);
    const old = rowOf(c.id);
    const row = renderRow(c);
    if (old) old.remove();
    insertSorted(listFor(c), row, c);
    if (c.state === "waiting_operator") {
      if (!wasWaiting && state.welcomed) announce(c);
      state.waitingSeen.add(c.id);
    } else {
      state.waitingSeen.delete(c.id);
    }
    if (c.id === CURRENT) updateHeader(c);
    refreshEmpty();
  }

  // The whole queue at once (hello, a reconnect): the rows upsertConversation would make, in the
  // order its inserts would give (a stable sort on the same keys), each list drawn in one go and
  // counted once. Row by row, every insert scanned its list and recounted all lists: with 500
  // waiting conversations that kept the browser busy for a third of a second.
  function renderQueue(conversations) {
    Object.values(lists).forEach((list) => list && list.querySelectorAll(".conv").forEach((r) => r.remove()));
    document.querySelectorAll("[data-more]").forEach((note) => note.remove()); // the whole queue is here now
    state.conversations.clear();
    state.waitingSeen.clear();
    const groups = { waiting: [], mine: [], recent: [] };
    conversations.forEach((c) => {
      state.conversations.set(c.id, c);
      if (c.state === "waiting_operator") state.waitingSeen.add(c.id);
      groups[listFor(c)].push(c);
      if (c.id === CURRENT) updateHeader(c);
    });
    Object.keys(groups).forEach((name) => {
      const list = lists[name];
      if (!list) return;
      const key = sortKey(name);
      const rows = document.createDocumentFragment();
      groups[name].map((c, i) => [key(c), i, c])
        .sort((a, b) => (a[0] > b[0]) - (a[0] < b[0]) || a[1] - b[1])
        .forEach((item) => rows.append(renderRow(item[2])));
      list.insertBefore(rows, list.querySelector("[data-empty]"));
    });
    refreshEmpty();
  }

  function updateCount() {
    const n = lists.waiting ? lists.waiting.querySelectorAll(".conv").length : 0;
    if (ui.count) {
      ui.count.textContent = String(n);
      ui.count.hidden = !n;
    }
    document.title = (n ? "(" + n + ") " : "") + BASE_TITLE;
    const lateCount = document.getElementById("late-count");
    if (lateCount) {
      const late = lists.waiting ? lists.waiting.querySelectorAll('.conv[data-late="true"]').length : 0;
      lateCount.textContent = fmt(T.late_count, { n: late });
      lateCount.hidden = !late;
    }
  }

  function tick() {
    document.querySelectorAll(".conv").forEach((row) => {
      const c = state.conversations.get(Number(row.getAttribute("data-id")));
      const time = row.querySelector(".conv-time");
      if (c && time) time.textContent = timeLabel(c);
      if (c) markLate(row, c);
    });
    updateCount();
  }

  /* ---------- a new visitor waits: sound, notification, title ---------- */

  function beep() {
    try {
      const AudioCtx = window.AudioContext || window.webkitAudioContext;
      if (!AudioCtx) return;
      state.audio = state.audio || new AudioCtx();
      const ctx = state.audio;
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.0001, ctx.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.2, ctx.currentTime + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, ctx.currentTime + 0.35);
      osc.connect(gain).connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.4);
    } catch (e) { /* no sound on this browser */ }
  }

  function announce(c) {
    beep();
    body.setAttribute("data-last-announced", String(c.id));
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    try {
      const note = new Notification(fmt(T.notify_title, { bot: c.bot ? c.bot.name : "" }), {
        body: visitorLabel(c) + ": " + ((c.last_message && c.last_message.text) || ""),
        tag: "spravka-conversation-" + c.id,
      });
      note.onclick = () => {
        window.focus();
        window.location.href = "/inbox/c/" + Number(c.id) + "/";
      };
    } catch (e) { /* notifications blocked */ }
  }

  function setupNotifications() {
    if (!ui.notifyBtn || !("Notification" in window) || Notification.permission !== "default") return;
    ui.notifyBtn.hidden = false;
    ui.notifyBtn.addEventListener("click", () => {
      beep(); // a user gesture also unlocks sound
      Notification.requestPermission().then(() => { ui.notifyBtn.hidden = true; });
    });
  }

  /* ---------- the open conversation ---------- */

  function renderMessage(m, unanswered) {
    const role = ["visitor", "bot", "operator", "system"].indexOf(m.role) >= 0 ? m.role : "system";
    const item = el("div", "msg " + role + (unanswered ? " unanswered" : ""));
    item.setAttribute("data-id", String(m.id));
    const who = role === "operator" ? (m.author || T.roles.operator) : T.roles[role];
    const head = el("span", "msg-who", who + " · ");
    const time = el("time", null, hhmm(m.created_at));
    time.setAttribute("datetime", String(m.created_at));
    head.appendChild(time);
    item.append(head, el("div", "bubble", m.text || ""));
    if (unanswered) item.appendChild(el("span", "msg-flag", T.unanswered));
    // Product cards as the visitor got them (values from the shop's feed), one line each.
    (Array.isArray(m.cards) ? m.cards : []).forEach((c) => {
      if (!c || typeof c !== "object") return;
      const line = el("span", "msg-src msg-card", (T.card || "") + ": ");
      const name = String(c.name || "");
      if (typeof c.url === "string" && /^https?:\/\//i.test(c.url)) {
        const a = el("a", null, name);
        a.href = c.url;
        a.target = "_blank";
        a.rel = "noopener";
        line.appendChild(a);
      } else {
        line.appendChild(document.createTextNode(name));
      }
      line.appendChild(document.createTextNode(" — " + String(c.price_text || "") + (c.available ? "" : " (" + (T.out_of_stock || "") + ")")));
      item.appendChild(line);
    });
    (Array.isArray(m.links) ? m.links : []).forEach((link) => {
      if (!link || typeof link.url !== "string") return;
      const line = el("span", "msg-src", T.source + ": ");
      if (/^https?:\/\//i.test(link.url)) {
        const a = el("a", null, link.title || link.url);
        a.href = link.url;
        a.target = "_blank";
        a.rel = "noopener";
        line.appendChild(a);
      } else {
        line.appendChild(document.createTextNode(link.title || link.url));
      }
      item.appendChild(line);
    });
    return item;
  }

  function appendMessage(m, unanswered) {
    if (!ui.transcript || !m || m.id == null) return;
    const node = renderMessage(m, unanswered);
    const old = ui.transcript.querySelector('.msg[data-id="' + Number(m.id) + '"]');
    if (old) {
      node.className = old.className; // keep the highlight of an unanswered question
      old.replaceWith(node);
    } else {
      ui.transcript.appendChild(node);
    }
    ui.transcript.scrollTop = ui.transcript.scrollHeight;
  }

  function renderTranscript(f) {
    if (!ui.transcript) return;
    const unanswered = new Set(f.unanswered || []);
    ui.transcript.textContent = "";
    (f.messages || []).forEach((m) => appendMessage(m, unanswered.has(m.id)));
    pendingAll().filter((p) => p.conversation_id === CURRENT).forEach(showPending);
    if (f.conversation) updateHeader(f.conversation);
  }

  function updateHeader(c) {
    if (ui.stateBadge) {
      ui.stateBadge.textContent = T.states[c.state] || c.state;
      ui.stateBadge.className = "badge state-" + c.state;
    }
    if (ui.holder) ui.holder.textContent = c.assigned_to ? fmt(T.holder, { name: c.assigned_to.name }) : "";
    if (ui.visitor) ui.visitor.textContent = visitorLabel(c);  // a contact left names them
    // The visitor's current page, as the widget last reported it.
    const pageLine = document.getElementById("visitor-page-line");
    const pageLink = document.getElementById("visitor-page");
    if (pageLine && pageLink && typeof c.page_url === "string" && /^https?:\/\//i.test(c.page_url)) {
      pageLink.href = c.page_url;
      pageLink.title = c.page_url;
      const label = String(c.page_title || c.page_url);
      pageLink.textContent = label.length > 70 ? label.slice(0, 69) + "…" : label;
      pageLine.hidden = false;
    }
    const show = {
      take: c.state === "waiting_operator" || c.state === "bot",
      release: c.state === "waiting_operator" || c.state === "operator",
      close: c.state !== "closed",
    };
    document.querySelectorAll("[data-action]").forEach((b) => { b.hidden = !show[b.getAttribute("data-action")]; });
    if (ui.reply) ui.reply.hidden = c.state === "closed";
  }

  function showNotice(text) {
    if (!ui.notice) return;
    clearTimeout(state.noticeTimer);
    ui.notice.textContent = text;
    ui.notice.hidden = false;
    state.noticeTimer = setTimeout(() => { ui.notice.hidden = true; }, 8000);
  }

  function showPending(p) {
    if (!ui.transcript || ui.transcript.querySelector('[data-cid="' + CSS.escape(p.client_msg_id) + '"]')) return;
    const node = renderMessage({ id: "", role: "operator", text: p.text, created_at: new Date().toISOString() });
    node.removeAttribute("data-id");
    node.setAttribute("data-cid", p.client_msg_id);
    node.classList.add("pending");
    ui.transcript.appendChild(node);
    ui.transcript.scrollTop = ui.transcript.scrollHeight;
  }

  function submitReply(e) {
    e.preventDefault();
    const text = ui.text.value.trim();
    if (!text || !CURRENT) return;
    const p = { conversation_id: CURRENT, client_msg_id: uuid(), text: text };
    const canned = Number(ui.text.dataset.cannedId) || 0; // the canned reply it was made from (inbox-canned.js)
    if (canned) p.canned_id = canned;
    savePending([...pendingAll(), p]);
    showPending(p);
    ui.text.value = "";
    delete ui.text.dataset.cannedId;
    stopTyping();
    sendPending(p);
  }

  function sendPending(p) {
    const frame = { type: "message", conversation_id: p.conversation_id, client_msg_id: p.client_msg_id, text: p.text };
    if (p.canned_id) frame.canned_id = p.canned_id;
    send(frame);
  }

  function onTyping() {
    if (!CURRENT) return;
    const now = Date.now();
    if (now - state.typingSentAt > TYPING_EVERY_MS) {
      state.typingSentAt = now;
      send({ type: "typing", conversation_id: CURRENT, on: true });
    }
    clearTimeout(state.typingIdle);
    state.typingIdle = setTimeout(stopTyping, TYPING_IDLE_MS);
  }

  function stopTyping() {
    clearTimeout(state.typingIdle);
    if (state.typingSentAt) send({ type: "typing", conversation_id: CURRENT, on: false });
    state.typingSentAt = 0;
  }

  /* ---------- the socket ---------- */

  function send(frame) {
    if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return false;
    if (frame.type !== "hello" && !state.welcomed) return false;
    state.ws.send(JSON.stringify(frame));
    return true;
  }

  function setConnection(text) {
    if (!ui.conn) return;
    ui.conn.textContent = text || "";
    ui.conn.hidden = !text;
  }

  function connect() {
    clearTimeout(state.timer);
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/inbox/");
    state.ws = ws;
    ws.onopen = () => send({ type: "hello" });
    ws.onmessage = (e) => {
      if (ws !== state.ws) return;
      let frame;
      try { frame = JSON.parse(e.data); } catch (err) { return; }
      const handler = frame && HANDLERS[frame.type];
      if (handler) handler(frame);
      // Other scripts of the page (inbox-copilot.js) hear every frame too.
      if (frame) document.dispatchEvent(new CustomEvent("spravka:inbox-frame", { detail: frame }));
    };
    ws.onclose = (e) => {
      if (ws !== state.ws) return;
      state.ws = null;
      state.welcomed = false;
      if (e.code === 4401) {
        window.location.href = "/accounts/login/?next=" + encodeURIComponent(location.pathname);
        return;
      }
      if (e.code === 4403) return setConnection(T.refused);
      setConnection(T.offline);
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * Math.pow(2, state.attempt++));
      state.timer = setTimeout(connect, delay / 2 + Math.random() * delay / 2);
    };
  }

  const HANDLERS = {
    queue(f) {
      state.welcomed = false; // announce only what arrives after the queue itself
      renderQueue(f.conversations || []);
      state.welcomed = true;
      state.attempt = 0;
      setConnection("");
      if (CURRENT) send({ type: "open", conversation_id: CURRENT });
      pendingAll().forEach(sendPending);
      state.actions.splice(0).forEach(send);
    },
    conversation(f) {
      if (f.conversation) upsertConversation(f.conversation);
    },
    transcript(f) {
      if (f.conversation_id === CURRENT) renderTranscript(f);
    },
    message(f) {
      if (f.conversation_id === CURRENT) appendMessage(f.message, false);
    },
    ack(f) {
      savePending(pendingAll().filter((p) => p.client_msg_id !== f.client_msg_id));
      const pending = ui.transcript && ui.transcript.querySelector('[data-cid="' + CSS.escape(String(f.client_msg_id)) + '"]');
      if (pending) pending.remove();
      if (f.conversation_id === CURRENT) appendMessage(f.message, false);
    },
    error(f) {
      if (f.client_msg_id && ["empty", "too_long", "closed", "not_found", "bad_frame"].indexOf(f.code) >= 0) {
        const dropped = pendingAll().find((p) => p.client_msg_id === f.client_msg_id);
        savePending(pendingAll().filter((p) => p.client_msg_id !== f.client_msg_id));
        const node = ui.transcript && ui.transcript.querySelector('[data-cid="' + CSS.escape(String(f.client_msg_id)) + '"]');
        if (node) node.remove();
        if (dropped && ui.text && !ui.text.value) ui.text.value = dropped.text;
      }
      if (f.code === "hello_required") return send({ type: "hello" });
      showNotice(f.message || T.error);
    },
    pong() {},
  };

  /* ---------- start ---------- */

  window.spravkaInbox = { send: send }; // the page's other scripts send their frames on this socket

  document.querySelectorAll("[data-action]").forEach((b) => {
    b.addEventListener("click", () => {
      const frame = { type: b.getAttribute("data-action"), conversation_id: CURRENT };
      if (!send(frame)) state.actions.push(frame); // the page has just opened: send after the queue
    });
  });
  if (ui.reply) {
    ui.reply.addEventListener("submit", submitReply);
    ui.text.addEventListener("input", onTyping);
    ui.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) submitReply(e);
    });
  }
  if (ui.transcript) ui.transcript.scrollTop = ui.transcript.scrollHeight;
  setupNotifications();
  setInterval(tick, 15000);
  connect();
})();
