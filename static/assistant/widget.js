/*
 * Spravka chat widget. One tag, no build step, no dependencies:
 *   <script src="https://APP/static/assistant/widget.js" data-bot="PUBLIC_KEY" async></script>
 * Optional attributes: data-lang="en" or "ru" (the interface language; without it the widget follows the
 * page's own <html lang>: "en…" gives English, anything else Russian; the snippet of an English bot carries
 * data-lang="en"), data-title="Header text". The visitor's own language comes first (`chooseLanguage`):
 * a browser whose first language is English gets English, and the widget turns to the language of
 * what the visitor writes (English or Russian, told by its letters as the server does:
 * knowledge/languages.py), remembered for their next pages.
 *
 * What must stay true:
 * - Everything lives in an open Shadow DOM: the shop's CSS cannot break the widget and ours
 *   cannot leak into the shop.
 * - Text from the server or the visitor goes in through textContent only, never innerHTML;
 *   a link becomes <a> only when its url starts with http(s)://. Line breaks show as they are,
 *   and lines that start with "• ", "- " or "1. " become a list (renderText), still as text nodes.
 * - The websocket goes to the host the script came from, not the page's host: the widget
 *   runs on the shop's origin, the server lives elsewhere.
 * - A message gets its client_msg_id once and keeps it through reconnects, so a resend after
 *   a lost ack is deduplicated by the server instead of being answered twice.
 * Protocol: docs/widget-protocol.md.
 */
(function () {
  "use strict";
  if (window.SpravkaWidget) return; // the snippet pasted twice must not start two widgets

  // Async scripts may run after document.currentScript is gone, hence the fallback.
  const script = document.currentScript || document.querySelector('script[data-bot][src*="widget.js"]');
  if (!script || !script.getAttribute("data-bot")) return;

  const BOT = script.getAttribute("data-bot");
  const SRC = new URL(script.src, location.href);
  // The app may be mounted under a path prefix: keep everything before /static/.
  const APP_PATH = SRC.pathname.split("/static/")[0];
  const WS_URL = (SRC.protocol === "https:" ? "wss://" : "ws://") + SRC.host + APP_PATH +
    "/ws/chat/" + encodeURIComponent(BOT) + "/";
  const KEY = "spravka:" + BOT + ":";
  const ROLES = ["visitor", "bot", "operator", "system"];
  const MAX_BACKOFF_MS = 30000;
  const PING_EVERY_MS = 25000;
  const PONG_WAIT_MS = 10000;
  const TYPING_MAX_MS = 60000;
  const MAX_TEXT = 2000; // the server refuses longer texts with too_long
  // Close codes after which reconnecting cannot help (docs/widget-protocol.md).
  const FINAL_CLOSE_CODES = [4403, 4404];
  const FINAL_ERRORS = ["unknown_bot", "origin_refused"];
  // Errors that can only answer a "message" frame (instead of its ack), even when unnamed.
  const MESSAGE_ERRORS = ["rate_limited", "too_large", "too_long", "empty", "closed"];
  const SERVER_ERROR_RETRIES = 2;
  // Frames that may go before the welcome: the chat's hello, and where the visitor is.
  const BEFORE_HELLO = ["hello", "page", "invite_shown", "ping"];
  const NAV_CHECK_MS = 1000; // how often the address is compared (single-page shops navigate without a load)

  const TEXTS = {
    ru: {
      title: "Помощник", open: "Открыть чат", close: "Закрыть чат", input: "Ваше сообщение",
      placeholder: "Напишите вопрос…", send: "Отправить", source: "Источник: ",
      rate: "Оцените ответ", up: "Ответ помог", down: "Ответ не помог",
      you: "Вы", bot: "Ассистент", operator: "Оператор", system: "Сообщение системы",
      typing: "Ассистент печатает…", connecting: "Подключаемся…",
      offline: "Нет связи. Переподключаемся…", sending: "отправляется…",
      hello: "Здравствуйте! Задайте вопрос — отвечу по материалам сайта.",
      waiting_operator: "Ждём оператора. Он ответит здесь же.", operator_on: "К разговору подключился оператор.",
      closed: "Разговор завершён.", unread: "новое сообщение", operator_typing: "Оператор печатает…",
      lead_title: "Оставьте контакт — мы свяжемся с вами", lead_name: "Имя", lead_phone: "Телефон",
      lead_email: "E-mail", lead_question: "Вопрос", lead_policy: "Политика обработки персональных данных",
      lead_send: "Отправить", lead_cancel: "Отмена", lead_need_contact: "Укажите телефон или e-mail.",
      lead_need_consent: "Без согласия мы не можем сохранить контакт.", lead_sending: "Отправляем…",
      cards: "Товары", in_stock: "В наличии", out_of_stock: "Нет в наличии", old_price: "Старая цена: ",
      price: "Цена: ", invite_close: "Закрыть приглашение", invite_open: "Открыть чат: ",
      csat_title: "Оцените, пожалуйста, разговор", csat_star: "{n} из 5", csat_comment: "Комментарий (необязательно)",
      csat_send: "Отправить оценку", csat_thanks: "Спасибо за оценку!", csat_need_stars: "Выберите от 1 до 5 звёзд.",
      choice: "Кому задать вопрос", choice_bot: "Спросить бота", choice_operator: "Написать оператору",
      err: {
        rate_limited: "Слишком много сообщений, подождите {n} с",
        too_large: "Сообщение слишком длинное, сократите его.",
        too_long: "Сообщение слишком длинное, сократите его.",
        empty: "Сообщение пустое.",
        unknown_bot: "Чат на этом сайте не настроен.",
        origin_refused: "Чат не разрешён на этом сайте.",
        bad_frame: "Не удалось отправить. Обновите страницу.",
        handoff_unavailable: "Оператор сейчас недоступен.",
        lead_unavailable: "Оставить контакт сейчас нельзя.",
        server_error: "Не получилось ответить из-за ошибки на сервере. Пробуем ещё раз.",
        unavailable: "Связь с сервером ненадолго прервалась. Повторим, ничего не потеряется.",
        other: "Что-то пошло не так. Попробуйте ещё раз.",
      },
    },
    en: {
      title: "Assistant", open: "Open chat", close: "Close chat", input: "Your message",
      placeholder: "Type a question…", send: "Send", source: "Source: ",
      rate: "Rate the answer", up: "Helpful", down: "Not helpful",
      you: "You", bot: "Assistant", operator: "Operator", system: "System message",
      typing: "The assistant is typing…", connecting: "Connecting…",
      offline: "No connection. Reconnecting…", sending: "sending…",
      hello: "Hello! Ask a question and I will answer from this site's pages.",
      waiting_operator: "Waiting for an operator. They will reply here.", operator_on: "An operator has joined.",
      closed: "The conversation is closed.", unread: "new message", operator_typing: "The operator is typing…",
      lead_title: "Leave your contact and we will get back to you", lead_name: "Name", lead_phone: "Phone",
      lead_email: "E-mail", lead_question: "Question", lead_policy: "Personal data policy",
      lead_send: "Send", lead_cancel: "Cancel", lead_need_contact: "Please give a phone number or an e-mail.",
      lead_need_consent: "We cannot keep your contact without your consent.", lead_sending: "Sending…",
      cards: "Products", in_stock: "In stock", out_of_stock: "Out of stock", old_price: "Old price: ",
      price: "Price: ", invite_close: "Close the invitation", invite_open: "Open the chat: ",
      csat_title: "Please rate this conversation", csat_star: "{n} of 5", csat_comment: "Comment (optional)",
      csat_send: "Send rating", csat_thanks: "Thank you for your rating!", csat_need_stars: "Choose 1 to 5 stars.",
      choice: "Who should answer", choice_bot: "Ask the bot", choice_operator: "Write to an operator",
      err: {
        rate_limited: "Too many messages, please wait {n} s",
        too_large: "The message is too long, please shorten it.",
        too_long: "The message is too long, please shorten it.",
        empty: "The message is empty.",
        unknown_bot: "The chat is not set up on this site.",
        origin_refused: "The chat is not allowed on this site.",
        bad_frame: "Could not send. Please reload the page.",
        handoff_unavailable: "No operator is available right now.",
        lead_unavailable: "Leaving a contact is not possible right now.",
        server_error: "A server error got in the way. Trying again.",
        unavailable: "The server was unreachable for a moment. Retrying; nothing is lost.",
        other: "Something went wrong. Please try again.",
      },
    },
  };
  let lang = "ru"; // chooseLanguage() at start, setLanguage() when the visitor writes in the other one
  let T = TEXTS[lang];

  const ICONS = {
    chat: "M20 2H4a2 2 0 0 0-2 2v18l4-4h14a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2zM6 9h12v2H6zm8 5H6v-2h8zm4-6H6V6h12z",
    close: "M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z",
    send: "M2.01 21 23 12 2.01 3 2 10l15 2-15 2z",
    up: "M1 21h4V9H1v12zm22-11a2 2 0 0 0-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10a2 2 0 0 0 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z",
    down: "M15 3H6c-.83 0-1.54.5-1.84 1.22l-3.02 7.05c-.09.23-.14.47-.14.73v2a2 2 0 0 0 2 2h6.31l-.95 4.57-.03.32c0 .41.17.79.44 1.06L9.83 23l6.59-6.59c.36-.36.58-.86.58-1.41V5a2 2 0 0 0-2-2zm4 0v12h4V3h-4z",
  };

  const STYLES = `
:host{all:initial}
*{box-sizing:border-box}
.root{font:15px/1.45 -apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1f2933;--accent:#1a56db;--accent-dark:#1442a8}
button{font:inherit;color:inherit;cursor:pointer}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.launcher{position:fixed;right:20px;bottom:20px;z-index:2147483000;width:60px;height:60px;border:0;border-radius:50%;background:var(--accent);color:#fff;box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center}
.launcher:hover{background:var(--accent-dark)}
.launcher svg{width:28px;height:28px;fill:currentColor}
.launcher .i-close,.open .launcher .i-chat{display:none}
.open .launcher .i-close{display:block}
.badge{position:absolute;top:2px;right:2px;width:14px;height:14px;border-radius:50%;background:#e02424;border:2px solid #fff}
.panel{position:fixed;right:20px;bottom:92px;z-index:2147483001;width:380px;height:min(620px,calc(100vh - 112px));background:#fff;border-radius:14px;box-shadow:0 10px 40px rgba(0,0,0,.22);display:flex;flex-direction:column;overflow:hidden}
.panel[hidden],[hidden]{display:none}
.head{display:flex;align-items:center;gap:8px;padding:12px 8px 12px 16px;background:var(--accent);color:#fff}
.head h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.icon{width:40px;height:40px;border:0;border-radius:8px;background:transparent;display:flex;align-items:center;justify-content:center}
.icon svg{width:22px;height:22px;fill:currentColor}
.head .icon{color:#fff}
.head .icon:hover{background:rgba(255,255,255,.15)}
.head :focus-visible{outline-color:#fff}
.status{padding:6px 16px;font-size:13px;background:#fef3c7;color:#78350f}
.notice{padding:8px 16px;font-size:14px;background:#fde8e8;color:#9b1c1c}
.log{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:10px;background:#f6f7f9}
.empty{margin:auto 8px;text-align:center;color:#52606d}
.msg{display:flex;flex-direction:column;align-items:flex-start;max-width:88%}
.msg.visitor{align-self:flex-end;align-items:flex-end}
.msg.system{align-self:center;max-width:95%}
.who{font-size:12px;color:#52606d;margin:0 4px 2px}
.bubble{padding:9px 12px;border-radius:14px;background:#fff;border:1px solid #e4e7eb;white-space:pre-wrap;overflow-wrap:anywhere}
.bubble .list{margin:4px 0;padding-left:20px;white-space:normal}
.bubble .list li{margin:2px 0}
.visitor .bubble{background:var(--accent);border-color:var(--accent);color:#fff}
.system .bubble{background:transparent;border:0;color:#52606d;font-size:13px;text-align:center;padding:2px}
.pending .bubble{opacity:.7}
.draft .bubble{color:#52606d}
.note{font-size:12px;color:#52606d;margin:2px 4px}
.src{font-size:13px;margin:4px 4px 0;color:#52606d;overflow-wrap:anywhere}
.src a{color:var(--accent)}
.replies{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}
.reply{padding:7px 12px;border:1px solid var(--accent);border-radius:18px;background:#fff;color:var(--accent);font-size:14px}
.reply:hover:not(:disabled){background:#eef3fd}
.reply:disabled{opacity:.55;cursor:default}
.choice{display:flex;flex-wrap:wrap;gap:8px;padding:4px 14px 10px;background:#f6f7f9}
.choice[hidden]{display:none}
.cards{list-style:none;margin:6px 0 0;padding:0;display:flex;flex-direction:column;gap:6px;width:100%}
.card{display:flex;gap:10px;align-items:flex-start;padding:8px;border:1px solid #e4e7eb;border-radius:12px;background:#fff;color:inherit;text-decoration:none}
a.card:hover{border-color:var(--accent)}
.card img{flex:none;width:64px;height:64px;object-fit:contain;border-radius:8px;background:#f6f7f9}
.card .noimg{flex:none;width:64px;height:64px;border-radius:8px;background:#eef0f3}
.card .info{display:flex;flex-direction:column;gap:2px;min-width:0}
.card .name{font-size:14px;font-weight:600;color:var(--accent);overflow-wrap:anywhere}
.card .prices{font-size:15px;font-weight:600}
.card .old{margin-left:6px;font-size:13px;font-weight:400;color:#7b8794;text-decoration:line-through}
.card .stock{font-size:12px;color:#046c4e}
.card .stock.out{color:#9b1c1c}
.invite{position:fixed;right:20px;bottom:92px;z-index:2147483000;max-width:300px;display:flex;align-items:flex-start;gap:4px;padding:10px 6px 10px 14px;background:#fff;border:1px solid #e4e7eb;border-radius:14px;box-shadow:0 6px 24px rgba(0,0,0,.18)}
.invite .invite-text{flex:1;border:0;background:transparent;text-align:left;padding:2px 0;font-size:15px;white-space:pre-wrap;overflow-wrap:anywhere}
.invite .icon{width:32px;height:32px;color:#52606d}
.invite .icon svg{width:18px;height:18px}
.open .invite{display:none}
.rate{display:flex;gap:2px;margin-top:2px}
.rate button{width:32px;height:32px;border:0;border-radius:8px;background:transparent;color:#7b8794;display:flex;align-items:center;justify-content:center}
.rate svg{width:16px;height:16px;fill:currentColor}
.rate button:hover{background:#e4e7eb}
.rate button[aria-pressed="true"]{color:var(--accent);background:#e1e9fb}
.csat{align-self:stretch;margin:0;padding:10px 12px;border:1px solid #e4e7eb;border-radius:14px;background:#fff;display:flex;flex-direction:column;gap:8px}
.csat fieldset{border:0;padding:0;margin:0;min-width:0;display:flex;flex-direction:column;gap:8px}
.csat legend{padding:0;font-weight:600;font-size:14px}
.csat .stars{display:flex;gap:2px}
.csat .stars label{position:relative;cursor:pointer;font-size:28px;line-height:1;color:#9aa5b1;padding:2px 3px;border-radius:6px}
.csat .stars input{position:absolute;opacity:0;width:1px;height:1px}
.csat .stars input:focus-visible+span{outline:3px solid #f59e0b;outline-offset:2px;border-radius:4px}
.csat .stars label.on{color:#d97706}
.csat textarea{padding:8px 10px;border:1px solid #cbd2d9;border-radius:8px;font:inherit;font-size:15px;min-height:48px;resize:vertical;color:inherit}
.csat .actions{display:flex;justify-content:flex-end}
.csat .actions button{padding:7px 14px;border-radius:8px;border:0;background:var(--accent);color:#fff}
.csat .csat-error{color:#c81e1e;font-size:13px}
.csat .csat-thanks{margin:0;color:#046c4e}
.typing{padding:0 14px 8px;background:#f6f7f9}
.dots{display:inline-flex;gap:4px;padding:10px 12px;background:#fff;border:1px solid #e4e7eb;border-radius:14px}
.dots i{width:7px;height:7px;border-radius:50%;background:#9aa5b1;animation:blink 1.2s infinite}
.dots i:nth-child(2){animation-delay:.2s}
.dots i:nth-child(3){animation-delay:.4s}
@keyframes blink{0%,80%,100%{opacity:.3}40%{opacity:1}}
.compose{display:flex;align-items:flex-end;gap:8px;padding:10px;border-top:1px solid #e4e7eb;background:#fff}
.compose textarea{flex:1;min-height:42px;max-height:140px;padding:9px 12px;border:1px solid #cbd2d9;border-radius:10px;font-family:inherit;font-size:16px;line-height:1.4;color:inherit;resize:none;background:#fff}
.compose textarea:focus-visible{outline:2px solid var(--accent);outline-offset:0;border-color:var(--accent)}
.send{width:42px;height:42px;border:0;border-radius:10px;background:var(--accent);color:#fff;display:flex;align-items:center;justify-content:center}
.send:hover{background:var(--accent-dark)}
.send svg{width:20px;height:20px;fill:currentColor}
.lead{flex:1;display:flex;flex-direction:column;gap:8px;padding:12px 14px;background:#fff;overflow-y:auto}
.lead h3{margin:0;font-size:15px}
.lead label{display:flex;flex-direction:column;gap:2px;font-size:13px;color:#3e4c59}
.lead input[type=text],.lead input[type=tel],.lead input[type=email],.lead textarea{padding:8px 10px;border:1px solid #cbd2d9;border-radius:8px;font:inherit;font-size:16px;color:inherit}
.lead textarea{min-height:56px;resize:vertical}
.lead .consent{flex-direction:row;align-items:flex-start;gap:8px}
.lead .consent input{margin-top:3px}
.lead .field-error{color:#c81e1e;font-size:12px}
.lead [aria-invalid="true"]{border-color:#c81e1e}
.lead .actions{display:flex;gap:8px;justify-content:flex-end}
.lead .actions button{padding:8px 14px;border-radius:8px;border:1px solid var(--accent);background:#fff;color:var(--accent)}
.lead .actions button[type=submit]{background:var(--accent);color:#fff}
.lead[hidden],.compose[hidden],.log[hidden]{display:none}
@media (max-width:480px){
.panel{inset:0;width:100%;height:100%;border-radius:0}
.open .launcher{display:none}
}
@media (prefers-reduced-motion:reduce){.dots i{animation:none}}
`;

  /* ---------- small helpers ---------- */

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = String(text);
    return node;
  }

  function icon(name) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    svg.setAttribute("class", "i-" + name);
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", ICONS[name]);
    svg.appendChild(path);
    return svg;
  }

  function button(cls, label, iconName) {
    const node = el("button", cls);
    node.type = "button";
    node.setAttribute("aria-label", label);
    if (iconName) node.appendChild(icon(iconName));
    return node;
  }

  // A text of the interface, marked on its node (data-t="text=hello" or "aria-label=close
  // placeholder=placeholder": where each text goes, and its key) so that a change of language
  // relabels every such node, messages included (`setLanguage`).
  function label(node, key, attr) {
    const marks = (node.getAttribute("data-t") || "").split(" ").filter((m) => m && !m.startsWith((attr || "text") + "="));
    marks.push((attr || "text") + "=" + key);
    node.setAttribute("data-t", marks.join(" "));
    relabel(node);
    return node;
  }

  function relabel(node) {
    (node.getAttribute("data-t") || "").split(" ").forEach((mark) => {
      const [attr, key] = mark.split("=");
      const text = T[key];
      if (text == null) return;
      if (attr === "text") node.textContent = text;
      else node.setAttribute(attr, text);
    });
  }

  function languageOf(value) {
    const v = String(value || "").toLowerCase();
    return v.startsWith("en") ? "en" : v.startsWith("ru") ? "ru" : "";
  }

  // The same rule as the server's (knowledge/languages.py): at least 3 letters of one alphabet and
  // more than twice the other's; "" for «ok», «5», emoji or mixed letters.
  function textLanguage(text) {
    const latin = (String(text).match(/[a-z]/gi) || []).length;
    const cyrillic = (String(text).match(/[а-яё]/gi) || []).length;
    if (latin >= 3 && latin > 2 * cyrillic) return "en";
    if (cyrillic >= 3 && cyrillic > 2 * latin) return "ru";
    return "";
  }

  // The visitor's language first: the one they last wrote in here, then English when their browser
  // asks for it first; then the owner's data-lang, the page's <html lang>, Russian.
  function chooseLanguage() {
    const written = languageOf(store.get("lang"));
    if (written) return written;
    const asked = (navigator.languages && navigator.languages[0]) || navigator.language;
    if (languageOf(asked) === "en") return "en";
    return languageOf(script.getAttribute("data-lang")) || languageOf(document.documentElement.lang) || "ru";
  }

  function setLanguage(next) {
    if (!TEXTS[next] || next === lang) return;
    lang = next;
    T = TEXTS[lang];
    if (!ui.root) return;
    ui.root.setAttribute("lang", lang);
    ui.root.querySelectorAll("[data-t]").forEach(relabel);
    ui.launcher.setAttribute("aria-label", state.open ? T.close : ui.badge.hidden ? T.open : T.open + " (" + T.unread + ")");
  }

  // localStorage can throw (private mode, blocked cookies): the chat then lives for this page only.
  const store = {
    get(name) {
      try { return window.localStorage.getItem(KEY + name); } catch (e) { return null; }
    },
    set(name, value) {
      try { window.localStorage.setItem(KEY + name, value); } catch (e) { /* memory only */ }
    },
  };
  const session = {
    get(name) {
      try { return window.sessionStorage.getItem(KEY + name); } catch (e) { return null; }
    },
    set(name, value) {
      try { window.sessionStorage.setItem(KEY + name, value); } catch (e) { /* memory only */ }
    },
  };

  function randomHex(bytes) {
    const buf = new Uint8Array(bytes);
    window.crypto.getRandomValues(buf);
    return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // crypto.randomUUID exists only in secure contexts; many shops still run on plain http.
  function uuid() {
    if (window.crypto.randomUUID) return window.crypto.randomUUID();
    const h = randomHex(16);
    const variant = ((parseInt(h[16], 16) & 3) | 8).toString(16);
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-4" + h.slice(13, 16) + "-" + variant + h.slice(17, 20) + "-" + h.slice(20);
  }

  function visitorId() {
    let id = store.get("visitor");
    if (!id || !/^v_[\w-]{8,64}$/.test(id)) {
      id = "v_" + randomHex(16);
      store.set("visitor", id);
    }
    return id;
  }

  function loadPending() {
    try {
      const list = JSON.parse(store.get("pending") || "[]");
      return Array.isArray(list) ? list.filter((p) => p && p.client_msg_id && typeof p.text === "string") : [];
    } catch (e) {
      return [];
    }
  }

  /* ---------- state ---------- */

  const state = {
    ws: null,
    welcomed: false, // hello answered: only then may messages go out
    stopped: false, // a permanent refusal (unknown key, origin not allowed): do not reconnect
    attempt: 0,
    reconnectTimer: 0,
    pingTimer: 0,
    pongTimer: 0,
    typingTimer: 0,
    noticeTimer: 0,
    lastSeen: Number(store.get("last_seen_id")) || 0,
    seenThisPage: 0, // highest id rendered on this page; 0 = ask for the whole history
    pending: loadPending(), // [{client_msg_id, text}] sent or waiting, not yet acknowledged
    // client_msg_ids sent on this socket and not yet acked, oldest first: an error frame that
    // does not name its message refuses the oldest (a socket's frames are handled in order).
    awaiting: [],
    conversationId: null,
    rendered: new Map(), // message id -> JSON it was rendered from (skip identical re-renders)
    open: false,
    convState: "bot", // bot | waiting_operator | operator | closed
    leadForm: null, // {consent, policy_url} from the welcome; null: this bot takes no contacts
    helloing: false, // hello sent on this socket, welcome not here yet
    pageUrl: "", // the address last reported in a "page" frame
    inviteTimer: 0,
    inviteLeave: null, // the mouseout listener of an invitation waiting for the visitor to leave
  };

  function savePending() {
    store.set("pending", JSON.stringify(state.pending));
  }

  /* ---------- DOM ---------- */

  const ui = {};

  function build() {
    // A custom element name: shop rules such as `div { display: none }` cannot reach the host.
    const host = document.createElement("spravka-widget");
    const shadow = host.attachShadow({ mode: "open" });
    const style = el("style", null, STYLES);
    ui.root = el("div", "root");
    ui.root.setAttribute("lang", lang);
    ui.launcher = buildLauncher();
    ui.panel = buildPanel();
    ui.root.append(ui.launcher, ui.panel);
    shadow.append(style, ui.root);
    document.body.appendChild(host);
  }

  function buildLauncher() {
    const launcher = button("launcher", T.open, "chat");
    launcher.appendChild(icon("close")); // shown instead of the chat icon while the panel is open
    launcher.setAttribute("aria-expanded", "false");
    launcher.setAttribute("aria-controls", "spravka-panel");
    ui.badge = el("span", "badge");
    ui.badge.hidden = true;
    launcher.appendChild(ui.badge);
    launcher.addEventListener("click", () => (state.open ? close() : open()));
    return launcher;
  }

  function buildPanel() {
    const panel = el("div", "panel");
    panel.id = "spravka-panel";
    panel.hidden = true;
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-labelledby", "spravka-title");
    panel.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        close();
      }
    });
    ui.status = el("div", "status");
    ui.status.setAttribute("role", "status");
    ui.status.hidden = true;
    ui.notice = el("div", "notice");
    ui.notice.setAttribute("role", "alert");
    ui.notice.hidden = true;
    ui.log = el("div", "log");
    ui.log.setAttribute("role", "log");
    ui.log.setAttribute("aria-live", "polite");
    if (script.getAttribute("data-title")) ui.log.setAttribute("aria-label", script.getAttribute("data-title"));
    else label(ui.log, "title", "aria-label");
    ui.log.tabIndex = 0; // lets keyboard users scroll a long history
    ui.empty = label(el("p", "empty"), "hello");
    ui.log.appendChild(ui.empty);
    panel.append(buildHeader(), ui.status, ui.log, buildChoice(), buildTyping(), ui.notice, buildLead(), buildForm());
    return panel;
  }

  // Before the visitor's first message, when the server offers it (welcome.choice): ask the bot
  // (the composer, as without the choice) or go straight to an operator (the operator button).
  // It sits just above the composer, so Shift+Tab from the text field reaches it.
  function buildChoice() {
    ui.choice = el("div", "choice");
    ui.choice.setAttribute("role", "group");
    label(ui.choice, "choice", "aria-label");
    ui.choice.hidden = true;
    const bot = label(el("button", "reply"), "choice_bot");
    bot.type = "button";
    bot.addEventListener("click", () => {
      hideChoice();
      ui.input.focus();
    });
    const operator = label(el("button", "reply"), "choice_operator");
    operator.type = "button";
    operator.addEventListener("click", () => {
      if (!send({ type: "button", id: "operator" })) return showNotice(T.offline);
      hideChoice();
      ui.input.focus(); // the hidden button would drop focus to <body>
    });
    ui.choice.append(bot, operator);
    return ui.choice;
  }

  function hideChoice() {
    ui.choice.hidden = true;
  }

  function buildHeader() {
    const head = el("div", "head");
    const title = script.getAttribute("data-title") ? el("h2", null, script.getAttribute("data-title"))
      : label(el("h2"), "title");
    title.id = "spravka-title";
    const closeBtn = label(button("icon", T.close, "close"), "close", "aria-label");
    closeBtn.addEventListener("click", close);
    head.append(title, closeBtn);
    return head;
  }

  function buildTyping() {
    ui.typing = el("div", "typing");
    ui.typing.hidden = true;
    const dots = el("span", "dots");
    dots.setAttribute("aria-hidden", "true");
    dots.append(el("i"), el("i"), el("i"));
    ui.typingText = label(el("span", "sr"), "typing");
    ui.typing.append(dots, ui.typingText);
    return ui.typing;
  }

  // The contact form («Оставить контакт»): opened by the lead button, sent as a "lead" frame.
  function leadField(name, key, type, autocomplete) {
    const wrap = el("label");
    wrap.appendChild(label(el("span"), key));
    const input = el(type === "textarea" ? "textarea" : "input");
    if (type !== "textarea") input.type = type;
    input.name = name;
    input.maxLength = name === "question" ? 2000 : 200;
    if (autocomplete) input.autocomplete = autocomplete;
    const error = el("span", "field-error");
    error.id = "spravka-lead-" + name + "-error";
    error.hidden = true;
    input.setAttribute("aria-describedby", error.id);
    wrap.append(input, error);
    ui.leadFields[name] = { input: input, error: error };
    return wrap;
  }

  function buildLead() {
    ui.leadFields = {};
    const form = el("form", "lead");
    form.hidden = true;
    form.noValidate = true;
    form.setAttribute("aria-labelledby", "spravka-lead-title");
    const title = label(el("h3"), "lead_title");
    title.id = "spravka-lead-title";
    const consent = el("label", "consent");
    const box = el("input");
    box.type = "checkbox";
    box.name = "consent";
    ui.leadConsentText = el("span");
    consent.append(box, ui.leadConsentText);
    const consentError = el("span", "field-error");
    consentError.hidden = true;
    ui.leadFields.consent = { input: box, error: consentError };
    const actions = el("div", "actions");
    const cancel = label(el("button"), "lead_cancel");
    cancel.type = "button";
    cancel.addEventListener("click", hideLead);
    const sendBtn = label(el("button"), "lead_send");
    sendBtn.type = "submit";
    actions.append(cancel, sendBtn);
    form.append(title, leadField("name", "lead_name", "text", "name"), leadField("phone", "lead_phone", "tel", "tel"),
      leadField("email", "lead_email", "email", "email"), leadField("question", "lead_question", "textarea"),
      consent, consentError, actions);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      submitLead();
    });
    form.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        hideLead();
      }
    });
    ui.lead = form;
    return form;
  }

  function lastQuestion() {
    const asked = ui.log.querySelectorAll(".msg.visitor .bubble");
    return asked.length ? asked[asked.length - 1].textContent : "";
  }

  function showLead() {
    if (!state.leadForm) return showNotice(T.err.lead_unavailable);
    ui.leadConsentText.textContent = String(state.leadForm.consent || "") + " ";
    if (/^https?:\/\//i.test(String(state.leadForm.policy_url || ""))) {
      const a = label(el("a"), "lead_policy");
      a.href = state.leadForm.policy_url;
      a.target = "_blank";
      a.rel = "noopener";
      ui.leadConsentText.appendChild(a);
    }
    const q = ui.leadFields.question.input;
    if (!q.value) q.value = lastQuestion();
    ui.lead.hidden = false;
    ui.form.hidden = true;
    ui.log.hidden = true; // the form takes the transcript's place while it is open
    ui.leadFields.name.input.focus();
  }

  function hideLead() {
    ui.lead.hidden = true;
    ui.form.hidden = false;
    ui.log.hidden = false;
    scrollDown();
    ui.input.focus();
  }

  function leadError(field, message) {
    Object.keys(ui.leadFields).forEach((name) => {
      const f = ui.leadFields[name];
      const on = name === field;
      f.error.hidden = !on;
      f.error.textContent = on ? message : "";
      if (on) f.input.setAttribute("aria-invalid", "true");
      else f.input.removeAttribute("aria-invalid");
    });
    if (field && ui.leadFields[field]) ui.leadFields[field].input.focus();
  }

  function submitLead() {
    const v = (name) => ui.leadFields[name].input.value.trim();
    if (!v("phone") && !v("email")) return leadError("phone", T.lead_need_contact);
    if (!ui.leadFields.consent.input.checked) return leadError("consent", T.lead_need_consent);
    leadError(null, "");
    const frame = { type: "lead", name: v("name"), phone: v("phone"), email: v("email"), question: v("question"),
      consent: true };
    if (!send(frame)) return showNotice(T.offline);
    state.leadSending = true;
  }

  function buildForm() {
    const form = el("form", "compose");
    ui.form = form;
    ui.input = el("textarea");
    ui.input.rows = 1;
    ui.input.maxLength = MAX_TEXT;
    label(ui.input, "placeholder", "placeholder");
    label(ui.input, "input", "aria-label");
    ui.input.addEventListener("keydown", onInputKey);
    ui.input.addEventListener("input", autosize);
    const send = label(button("send", T.send, "send"), "send", "aria-label");
    send.type = "submit";
    form.append(ui.input, send);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      submit();
    });
    return form;
  }

  // Enter sends, Shift+Enter is a new line; never send in the middle of an IME composition.
  function onInputKey(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  }

  function autosize() {
    ui.input.style.height = "auto";
    ui.input.style.height = Math.min(ui.input.scrollHeight + 2, 140) + "px";
  }

  /* ---------- open / close ---------- */

  function open() {
    hideInvite();
    state.open = true;
    session.set("open", "1");
    ui.panel.hidden = false;
    ui.root.classList.add("open");
    ui.launcher.setAttribute("aria-expanded", "true");
    setUnread(false);
    ui.launcher.setAttribute("aria-label", T.close);
    // The socket may be open already for page reports only: the chat itself starts with hello.
    if (state.ws && state.ws.readyState === WebSocket.OPEN && !state.welcomed && !state.helloing) sendHello();
    else connect();
    scrollDown();
    ui.input.focus();
  }

  // The dot is for the eyes; the launcher's label says the same to a screen reader.
  function setUnread(on) {
    ui.badge.hidden = !on;
    if (!state.open) ui.launcher.setAttribute("aria-label", on ? T.open + " (" + T.unread + ")" : T.open);
  }

  function close() {
    state.open = false;
    session.set("open", "");
    ui.panel.hidden = true;
    ui.root.classList.remove("open");
    ui.launcher.setAttribute("aria-expanded", "false");
    ui.launcher.setAttribute("aria-label", T.open);
    ui.launcher.focus();
  }

  /* ---------- rendering ---------- */

  function renderMessage(m) {
    const role = ROLES.indexOf(m.role) >= 0 ? m.role : "bot";
    const item = el("div", "msg " + role);
    if (m.id != null) item.setAttribute("data-id", String(m.id));
    if (m.client_msg_id) item.setAttribute("data-cid", String(m.client_msg_id));
    // Screen readers hear who spoke; sighted visitors see it from the bubble's side and colour.
    const who = el("span", role === "operator" ? "who" : "sr");
    if (role === "operator" && m.author) who.textContent = String(m.author) + ":";
    else who.append(label(el("span"), role === "visitor" ? "you" : role), ":");
    item.append(who, renderText(el("div", "bubble"), m.text || ""));
    renderCards(item, m.cards);
    renderLinks(item, m.links);
    renderButtons(item, m.buttons);
    if (role === "bot" && m.id != null) item.appendChild(renderRating(m.id, m.rating));
    return item;
  }

  // Plain text with line breaks; runs of "• item" / "- item" lines become <ul>, "1. item" lines <ol>.
  const BULLET = /^\s*[•·\-*]\s+(.*)$/;
  const NUMBERED = /^\s*\d{1,2}[.)]\s+(.*)$/;
  function renderText(node, text) {
    node.textContent = "";
    let list = null;
    let kind = "";
    let pendingBreak = false;
    String(text).split("\n").forEach((line) => {
      const bullet = BULLET.exec(line);
      const numbered = bullet ? null : NUMBERED.exec(line);
      const item = bullet || numbered;
      if (item) {
        const want = bullet ? "ul" : "ol";
        if (!list || kind !== want) {
          list = el(want, "list");
          kind = want;
          node.appendChild(list);
        }
        list.appendChild(el("li", null, item[1]));
        pendingBreak = false;
        return;
      }
      list = null;
      if (pendingBreak) node.appendChild(document.createElement("br"));
      node.appendChild(document.createTextNode(line));
      pendingBreak = true;
    });
    return node;
  }

  function renderLinks(item, links) {
    if (!Array.isArray(links)) return;
    links.forEach((link) => {
      if (!link || typeof link.url !== "string") return;
      const line = el("div", "src");
      line.appendChild(label(el("span"), "source"));
      const name = String(link.title || link.url);
      if (/^https?:\/\//i.test(link.url)) {
        const a = el("a", null, name);
        a.href = link.url;
        a.target = "_blank";
        a.rel = "noopener";
        line.appendChild(a);
      } else {
        line.appendChild(document.createTextNode(name));
      }
      item.appendChild(line);
    });
  }

  // Product cards: every value as the server copied it from the shop's feed, inserted as text; a
  // card is a link (keyboard reachable) only to an http(s) address, a picture only from one.
  function renderCards(item, cards) {
    if (!Array.isArray(cards) || !cards.length) return;
    const list = el("ul", "cards");
    label(list, "cards", "aria-label");
    cards.forEach((c) => {
      if (!c || typeof c !== "object") return;
      const li = el("li");
      const url = typeof c.url === "string" && /^https?:\/\//i.test(c.url) ? c.url : "";
      const card = el(url ? "a" : "div", "card");
      if (url) {
        card.href = url;
        card.target = "_blank";
        card.rel = "noopener";
      }
      const name = String(c.name || "");
      if (typeof c.picture === "string" && /^https?:\/\//i.test(c.picture)) {
        const img = el("img");
        img.loading = "lazy";
        img.decoding = "async";
        img.alt = name;
        img.width = 64;
        img.height = 64;
        img.referrerPolicy = "no-referrer";
        img.src = c.picture;
        img.addEventListener("error", () => img.replaceWith(el("span", "noimg")));
        card.appendChild(img);
      } else {
        card.appendChild(el("span", "noimg"));
      }
      const info = el("span", "info");
      info.appendChild(el("span", "name", name));
      const prices = el("span", "prices");
      prices.append(label(el("span", "sr"), "price"), document.createTextNode(String(c.price_text || "")));
      if (c.old_price_text) {
        const old = el("s", "old");
        old.append(label(el("span", "sr"), "old_price"), document.createTextNode(String(c.old_price_text)));
        prices.appendChild(old);
      }
      info.appendChild(prices);
      info.appendChild(label(el("span", c.available ? "stock" : "stock out"), c.available ? "in_stock" : "out_of_stock"));
      card.appendChild(info);
      li.appendChild(card);
      list.appendChild(li);
    });
    item.appendChild(list);
  }

  function renderButtons(item, buttons) {
    if (!Array.isArray(buttons) || !buttons.length) return;
    const row = el("div", "replies");
    buttons.forEach((b) => {
      if (!b || !b.id) return;
      const node = el("button", "reply", b.label || b.id);
      node.type = "button";
      node.addEventListener("click", () => pressButton(row, String(b.id)));
      row.appendChild(node);
    });
    item.appendChild(row);
  }

  function renderRating(id, rating) {
    const group = el("div", "rate");
    group.setAttribute("role", "group");
    label(group, "rate", "aria-label");
    [[1, "up"], [-1, "down"]].forEach(([value, name]) => {
      const node = label(button("", T[name], name), name, "aria-label");
      node.setAttribute("data-rating", String(value));
      node.setAttribute("aria-pressed", String(rating === value));
      node.addEventListener("click", () => rate(id, value, node));
      group.appendChild(node);
    });
    return group;
  }

  // Keep the log in id order: a reconnect may deliver older messages after newer local ones.
  function place(node, id) {
    const items = ui.log.querySelectorAll(".msg");
    for (const other of items) {
      const otherId = other.getAttribute("data-id");
      if (otherId == null || (id != null && Number(otherId) > id)) {
        ui.log.insertBefore(node, other);
        return;
      }
    }
    ui.log.appendChild(node);
  }

  function existingNode(m) {
    if (m.id != null) {
      const byId = ui.log.querySelector('.msg[data-id="' + Number(m.id) + '"]');
      if (byId) return byId;
    }
    if (!m.client_msg_id) return null;
    for (const node of ui.log.querySelectorAll(".msg[data-cid]")) {
      if (node.getAttribute("data-cid") === String(m.client_msg_id) && !node.hasAttribute("data-id")) return node;
    }
    return null;
  }

  function upsert(m) {
    const id = m && typeof m === "object" ? Number(m.id) : NaN;
    if (!Number.isFinite(id)) return; // not a stored message: nothing to key it by
    const json = JSON.stringify(m);
    const old = existingNode(m);
    if (old && state.rendered.get(id) === json) return; // unchanged: keep focus and scroll
    state.rendered.set(id, json);
    const node = renderMessage(m);
    if (old) old.replaceWith(node);
    else place(node, id);
    ui.empty.hidden = true;
    seen(id);
  }

  function seen(id) {
    state.seenThisPage = Math.max(state.seenThisPage, id);
    if (id > state.lastSeen) {
      state.lastSeen = id;
      store.set("last_seen_id", String(id));
    }
  }

  function renderPending(p) {
    const cid = String(p.client_msg_id);
    const shown = Array.from(ui.log.querySelectorAll(".msg[data-cid]")).some((n) => n.getAttribute("data-cid") === cid);
    if (shown) return;
    const node = renderMessage({ role: "visitor", text: p.text, client_msg_id: p.client_msg_id });
    node.classList.add("pending");
    node.appendChild(label(el("span", "note"), "sending"));
    ui.log.appendChild(node);
    ui.empty.hidden = true;
  }

  function removePendingNode(cid) {
    const node = existingNode({ client_msg_id: cid });
    if (node) node.remove();
  }

  // Streaming: a provisional bubble, replaced by the real message when it arrives.
  function renderDraft(cid, text) {
    let node = ui.log.querySelector('.draft[data-draft="' + CSS.escape(String(cid)) + '"]');
    if (!node) {
      node = el("div", "msg bot draft");
      node.setAttribute("data-draft", String(cid));
      node.setAttribute("aria-hidden", "true"); // the log announces the final message once
      node.appendChild(el("div", "bubble"));
      ui.log.appendChild(node);
    }
    renderText(node.firstChild, text || "");
  }

  function clearDrafts() {
    ui.log.querySelectorAll(".draft").forEach((node) => node.remove());
  }

  // Pending visitor messages stay: they are resent into the new conversation.
  function clearTranscript() {
    ui.log.querySelectorAll(".msg[data-id], .draft").forEach((node) => node.remove());
    state.rendered.clear();
    state.seenThisPage = 0;
    ui.empty.hidden = !!ui.log.querySelector(".msg");
  }

  function showTyping(on) {
    clearTimeout(state.typingTimer);
    ui.typing.hidden = !on;
    // A lost "typing off" must not leave the dots running forever.
    if (on) state.typingTimer = setTimeout(() => showTyping(false), TYPING_MAX_MS);
    scrollDown();
  }

  function showStatus(text) {
    ui.status.textContent = text || "";
    ui.status.hidden = !text;
  }

  function showNotice(text, seconds) {
    clearTimeout(state.noticeTimer);
    ui.notice.textContent = text;
    ui.notice.hidden = false;
    state.noticeTimer = setTimeout(() => { ui.notice.hidden = true; }, Math.max(seconds || 0, 6) * 1000);
  }

  function scrollDown() {
    ui.log.scrollTop = ui.log.scrollHeight;
  }

  function setConversation(value) {
    if (!value || value === state.convState) return;
    state.convState = value;
    if (value === "waiting_operator") showStatus(T.waiting_operator);
    else if (value === "operator") showStatus(T.operator_on);
    else if (value === "closed") showStatus(T.closed);
    else showStatus("");
  }

  /* ---------- visitor actions ---------- */

  function submit() {
    const text = ui.input.value.trim();
    if (!text) return;
    hideChoice();
    const written = textLanguage(text); // the server answers in it too (when the bot allows it)
    if (written) {
      store.set("lang", written);
      setLanguage(written);
    }
    const p = { client_msg_id: uuid(), text: text };
    state.pending.push(p);
    savePending();
    renderPending(p);
    ui.input.value = "";
    autosize();
    scrollDown();
    if (state.welcomed) sendMessage(p);
    else connect(); // the welcome handler sends everything still pending
  }

  // No local typing dots: the server sends "typing" itself, and only when the bot will answer
  // (while an operator is awaited it stays silent).
  function sendMessage(p) {
    if (send({ type: "message", client_msg_id: p.client_msg_id, text: p.text })) state.awaiting.push(p.client_msg_id);
  }

  function pressButton(row, id) {
    if (id === "lead") return showLead(); // the form lives here; the server hears only its result
    if (!send({ type: "button", id: id })) return showNotice(T.offline);
    row.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    ui.input.focus(); // the pressed button is now disabled and would drop focus to <body>
  }

  // Pressing the thumb that is already down takes the rating back (0). The last rating sent for a
  // message wins: the server's `rated` for an earlier click, arriving after a later one, is stale.
  const ratingSent = new Map();
  function rate(id, value, node) {
    const next = node.getAttribute("aria-pressed") === "true" ? 0 : value;
    if (!send({ type: "rate", message_id: id, rating: next })) return showNotice(T.offline);
    ratingSent.set(Number(id), next);
    markRating(id, next);
  }

  function rated(id, value) {
    const sent = ratingSent.get(Number(id));
    if (sent !== undefined && sent !== value) return; // an earlier click's answer: a later one is on its way
    ratingSent.delete(Number(id));
    markRating(id, value);
  }

  function markRating(id, value) {
    const item = ui.log.querySelector('.msg[data-id="' + Number(id) + '"]');
    if (!item) return;
    item.querySelectorAll(".rate button").forEach((b) => {
      b.setAttribute("aria-pressed", String(Number(b.getAttribute("data-rating")) === value));
    });
  }

  /* ---------- the conversation's rating (CSAT) ---------- */

  // After an operator closes the conversation the server asks (csat_ask): five stars as a radio
  // group (Tab into it, arrows choose, Space/Enter on the button sends), optional words, one send.
  function showCsat(conversationId) {
    const id = Number(conversationId);
    if (!Number.isFinite(id) || (ui.csat && ui.csat.getAttribute("data-conversation") === String(id))) return;
    if (ui.csat) ui.csat.remove();
    const form = el("form", "csat");
    form.noValidate = true;
    form.setAttribute("data-conversation", String(id));
    const set = el("fieldset");
    set.append(label(el("legend"), "csat_title"));
    const stars = el("div", "stars");
    stars.setAttribute("role", "radiogroup");
    label(stars, "csat_title", "aria-label");
    for (let n = 1; n <= 5; n += 1) {
      const wrap = el("label");
      const input = el("input");
      input.type = "radio";
      input.name = "stars";
      input.value = String(n);
      input.setAttribute("aria-label", T.csat_star.replace("{n}", String(n)));
      const star = el("span", null, "★");
      star.setAttribute("aria-hidden", "true");
      wrap.append(input, star);
      stars.appendChild(wrap);
      input.addEventListener("change", () => markStars(form, n));
    }
    set.appendChild(stars);
    const comment = el("textarea");
    comment.name = "comment";
    comment.maxLength = 1000;
    comment.rows = 2;
    label(comment, "csat_comment", "aria-label");
    label(comment, "csat_comment", "placeholder");
    const error = el("p", "csat-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    const actions = el("div", "actions");
    const sendBtn = label(el("button"), "csat_send");
    sendBtn.type = "submit";
    actions.appendChild(sendBtn);
    set.append(comment, error, actions);
    form.appendChild(set);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      submitCsat(form, id);
    });
    ui.csat = form;
    ui.log.appendChild(form);
    scrollDown();
  }

  function markStars(form, value) {
    form.querySelectorAll(".stars label").forEach((node, i) => node.classList.toggle("on", i < value));
  }

  function csatError(text) {
    if (!ui.csat) return;
    const error = ui.csat.querySelector(".csat-error");
    error.textContent = text;
    error.hidden = !text;
  }

  function submitCsat(form, id) {
    const checked = form.querySelector('input[name="stars"]:checked');
    if (!checked) return csatError(T.csat_need_stars);
    csatError("");
    const comment = form.querySelector("textarea").value.trim();
    if (!send({ type: "csat", conversation_id: id, stars: Number(checked.value), comment: comment })) {
      return csatError(T.offline);
    }
  }

  function csatThanks() {
    if (!ui.csat) return;
    const thanks = label(el("p", "csat-thanks"), "csat_thanks");
    thanks.setAttribute("role", "status");
    ui.csat.replaceChildren(thanks);
    ui.csat.classList.add("done");
    ui.input.focus();
  }

  /* ---------- connection ---------- */

  function send(frame) {
    const ws = state.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    if (BEFORE_HELLO.indexOf(frame.type) < 0 && !state.welcomed) return false;
    ws.send(JSON.stringify(frame));
    return true;
  }

  function connect() {
    if (state.stopped || (state.ws && state.ws.readyState <= WebSocket.OPEN)) return;
    clearTimeout(state.reconnectTimer);
    showStatus(T.connecting);
    let ws;
    try {
      ws = new WebSocket(WS_URL);
    } catch (e) {
      return scheduleReconnect();
    }
    state.ws = ws;
    ws.onopen = () => {
      // A visitor who talked here before (or opened the panel) gets the chat; everyone reports the page.
      if (state.open || state.lastSeen || state.pending.length) sendHello();
      else startPing();
      sendPage();
    };
    ws.onmessage = (e) => onFrame(ws, e.data);
    ws.onclose = (e) => onClose(ws, e.code);
  }

  // On a fresh page ask for the whole history (null); on a reconnect only for what we missed.
  function sendHello() {
    state.welcomed = false;
    state.helloing = true;
    send({
      type: "hello",
      visitor_id: visitorId(),
      last_seen_id: state.seenThisPage || null,
      page_url: String(location.href).slice(0, 2000), // operators see where the visitor is
    });
  }

  function onClose(ws, code) {
    if (ws !== state.ws) return;
    state.ws = null;
    state.welcomed = false;
    state.helloing = false;
    state.awaiting = [];
    if (FINAL_CLOSE_CODES.indexOf(code) >= 0) state.stopped = true;
    clearInterval(state.pingTimer);
    clearTimeout(state.pongTimer);
    showTyping(false);
    clearDrafts();
    if (!state.stopped) scheduleReconnect();
  }

  // Exponential backoff with jitter so a restarted server is not hit by every visitor at once.
  function scheduleReconnect() {
    clearTimeout(state.reconnectTimer);
    const base = Math.min(MAX_BACKOFF_MS, 1000 * Math.pow(2, state.attempt));
    state.attempt += 1;
    showStatus(T.offline);
    state.reconnectTimer = setTimeout(connect, base / 2 + Math.random() * base / 2);
  }

  function reconnectNow() {
    if (state.stopped || state.ws) return;
    state.attempt = 0;
    connect();
  }

  // A half-open connection (laptop lid, mobile network switch) never fires onclose by itself.
  function startPing() {
    clearInterval(state.pingTimer);
    state.pingTimer = setInterval(() => {
      if (!send({ type: "ping" })) return;
      clearTimeout(state.pongTimer);
      state.pongTimer = setTimeout(() => state.ws && state.ws.close(), PONG_WAIT_MS);
    }, PING_EVERY_MS);
  }

  function onFrame(ws, raw) {
    if (ws !== state.ws) return;
    clearTimeout(state.pongTimer); // any frame proves the connection is alive
    let frame;
    try {
      frame = JSON.parse(raw);
    } catch (e) {
      return;
    }
    const handler = frame && HANDLERS[frame.type];
    if (handler) handler(frame);
  }

  /* ---------- server frames ---------- */

  const HANDLERS = {
    welcome(f) {
      state.welcomed = true;
      state.helloing = false;
      state.attempt = 0;
      state.awaiting = [];
      // A different conversation means the old one was closed: start a clean transcript.
      if (state.conversationId != null && f.conversation_id !== state.conversationId) clearTranscript();
      state.conversationId = f.conversation_id;
      state.leadForm = f.lead_form && typeof f.lead_form === "object" ? f.lead_form : null;
      showStatus("");
      state.convState = "";
      setConversation(f.state);
      const messages = Array.isArray(f.messages) ? f.messages : [];
      // Only a visitor with no conversation and nothing written gets the choice.
      ui.choice.hidden = !(f.choice === true && f.conversation_id == null && !messages.length && !state.pending.length);
      messages.forEach(upsert);
      // A finished conversation that still asks for stars (the page was reloaded after the ask).
      if (f.csat && typeof f.csat.conversation_id === "number") showCsat(f.csat.conversation_id);
      resendPending();
      startPing();
      scrollDown();
    },
    ack(f) {
      // The first message starts the conversation: its id comes with the ack (welcome had none).
      if (typeof f.conversation_id === "number") state.conversationId = f.conversation_id;
      hideChoice();
      state.awaiting = state.awaiting.filter((cid) => cid !== f.client_msg_id);
      dropPending(f.client_msg_id);
      if (f.message) upsert(f.message);
      scrollDown();
    },
    message(f) {
      const m = f.message;
      if (!m) return;
      if (m.role !== "visitor") {
        showTyping(false);
        clearDrafts();
      }
      if (m.client_msg_id && m.role === "visitor") dropPending(m.client_msg_id);
      upsert(m);
      if (!state.open && m.role !== "visitor") setUnread(true);
      scrollDown();
    },
    typing(f) {
      ui.typingText.textContent = f.by === "operator" ? T.operator_typing : T.typing;
      showTyping(Boolean(f.on));
    },
    lead_saved(f) {
      if (typeof f.conversation_id === "number") state.conversationId = f.conversation_id;
      state.leadSending = false;
      hideChoice();
      ui.lead.reset();
      hideLead();
    },
    delta(f) {
      showTyping(false);
      renderDraft(f.client_msg_id, f.text);
      scrollDown();
    },
    rated(f) {
      if (f.message_id != null) rated(f.message_id, Number(f.rating) || 0);
    },
    state(f) {
      if (f.state !== "bot") hideChoice();
      setConversation(f.state);
    },
    csat_ask(f) {
      showCsat(f.conversation_id);
    },
    csat_saved() {
      csatThanks();
    },
    pong() {},
    invite: scheduleInvite,
    error: onError,
  };

  // Everything not acked is sent again, even when the welcome already lists it: the message may
  // be stored while its answer is still being made, and a resend (same client_msg_id) is what
  // brings that answer back. The server deduplicates; the log deduplicates by id.
  function resendPending() {
    state.pending.forEach((p) => {
      renderPending(p);
      sendMessage(p);
    });
  }

  function dropPending(cid) {
    if (!cid) return;
    state.pending = state.pending.filter((p) => p.client_msg_id !== cid);
    savePending();
  }

  function errorText(f) {
    if (f.code === "rate_limited") {
      return T.err.rate_limited.replace("{n}", String(Math.ceil(Number(f.retry_after) || 1)));
    }
    // handoff_unavailable carries the company's own contacts: show the server's text as is.
    if (f.message && (lang === "ru" || f.code === "handoff_unavailable")) return String(f.message);
    return T.err[f.code] || T.err.other;
  }

  function pendingById(cid) {
    return state.pending.find((p) => p.client_msg_id === cid);
  }

  // An empty or too long message goes back into the input for the visitor to fix.
  function returnToInput(p) {
    dropPending(p.client_msg_id);
    removePendingNode(p.client_msg_id);
    if (!ui.input.value) {
      ui.input.value = p.text;
      autosize();
    }
  }

  function retryLater(p, seconds) {
    setTimeout(() => {
      if (pendingById(p.client_msg_id) && state.welcomed) sendMessage(p);
    }, Math.max(Number(seconds) || 1, 1) * 1000);
  }

  // The pending message an error refuses: the server names it (client_msg_id); when it does not,
  // it is the oldest one still awaiting its ack, since a socket's frames are handled in order.
  function refusedMessage(f) {
    let cid = f.client_msg_id;
    if (cid) state.awaiting = state.awaiting.filter((x) => x !== cid);
    else cid = state.awaiting.shift();
    return pendingById(cid);
  }

  function onMessageError(f) {
    const p = refusedMessage(f);
    if (!p) return;
    // same client_msg_id, as the doc asks; `unavailable`: the database is back in seconds
    if (f.code === "rate_limited" || f.code === "unavailable") retryLater(p, f.retry_after);
    else if (f.code === "closed") sendHello(); // a new conversation starts; its welcome resends p
    else if (f.code === "server_error") {
      // A resend is safe; a few tries, then it waits for the next reconnect (still pending).
      p.retries = (p.retries || 0) + 1;
      if (p.retries <= SERVER_ERROR_RETRIES) retryLater(p, 3 * p.retries);
    } else returnToInput(p);
  }

  function onError(f) {
    showTyping(false);
    if (f.frame === "csat" || f.code === "csat_refused") {
      if (f.code === "csat_refused" && f.reason === "csat_already") return csatThanks();
      return csatError(f.message ? String(f.message) : T.err.other);
    }
    if (f.code === "invalid_field" && !ui.lead.hidden) {
      state.leadSending = false;
      return leadError(String(f.field || ""), String(f.message || T.err.other));
    }
    // The answer to the contact form, not to a message: it must not refuse a pending message.
    if (state.leadSending && ["rate_limited", "lead_unavailable", "closed", "bad_frame"].indexOf(f.code) >= 0) {
      state.leadSending = false;
      return showNotice(f.message ? String(f.message) : errorText(f), f.retry_after);
    }
    if (f.code === "hello_required") {
      if (f.client_msg_id) refusedMessage(f);
      return sendHello(); // its welcome resends what is pending
    }
    if (FINAL_ERRORS.indexOf(f.code) >= 0) {
      state.stopped = true; // a wrong key or origin will not fix itself: do not hammer the server
      showStatus(errorText(f));
      return;
    }
    if (f.code === "not_found") return; // rating a message the server no longer offers: nothing to say
    // Too many new conversations from this address: say hello again once the window has passed.
    if (f.frame === "hello" && (f.code === "rate_limited" || f.code === "unavailable")) {
      setTimeout(() => { if (!state.welcomed) sendHello(); }, Math.max(Number(f.retry_after) || 1, 1) * 1000);
      return showNotice(errorText(f), f.retry_after);
    }
    // Older servers name no frame: an unnamed error of a message's kind refuses the oldest message.
    const forMessage = f.frame ? f.frame === "message" : MESSAGE_ERRORS.indexOf(f.code) >= 0;
    if (f.client_msg_id || forMessage) onMessageError(f);
    if (f.code !== "closed") showNotice(errorText(f), f.retry_after);
  }

  /* ---------- where the visitor is, and invitations ---------- */

  // On load and on every navigation (docs/widget-protocol.md, "page"); the server answers with an
  // "invite" frame when one of the owner's rules fits.
  function sendPage() {
    state.pageUrl = String(location.href);
    hideInvite();
    const referrer = /^https?:\/\//i.test(document.referrer) ? String(document.referrer).slice(0, 2000) : "";
    send({
      type: "page", visitor_id: visitorId(), url: state.pageUrl.slice(0, 2000),
      title: String(document.title || "").slice(0, 300), referrer: referrer,
    });
  }

  function checkNavigation() {
    if (String(location.href) !== state.pageUrl && state.ws && state.ws.readyState === WebSocket.OPEN) sendPage();
  }

  function clearInviteWait() {
    clearTimeout(state.inviteTimer);
    if (state.inviteLeave) document.removeEventListener("mouseout", state.inviteLeave);
    state.inviteLeave = null;
  }

  // After the rule's seconds on this page, and with "on_leave" only once the pointer leaves the
  // window at its top edge (towards the tabs and the address bar).
  function scheduleInvite(f) {
    clearInviteWait();
    if (state.open || typeof f.text !== "string" || !f.text) return;
    const rule = Number(f.rule);
    const wait = Math.min(Math.max(Number(f.after_seconds) || 0, 0), 3600) * 1000;
    state.inviteTimer = setTimeout(() => {
      if (!f.on_leave) return showInvite(rule, f.text);
      state.inviteLeave = (e) => {
        if (!e.relatedTarget && e.clientY <= 0) showInvite(rule, f.text);
      };
      document.addEventListener("mouseout", state.inviteLeave);
    }, wait);
  }

  function showInvite(rule, text) {
    clearInviteWait();
    if (state.open || ui.invite) return;
    const box = el("div", "invite");
    box.setAttribute("role", "status"); // heard once by a screen reader, never steals the focus
    const message = el("button", "invite-text", text);
    message.type = "button";
    message.setAttribute("aria-label", T.invite_open + text);
    message.addEventListener("click", () => {
      hideInvite();
      if (!ui.log.querySelector(".msg")) ui.empty.textContent = text; // the chat opens with the invitation's words
      open();
    });
    const dismiss = label(button("icon", T.invite_close, "close"), "invite_close", "aria-label");
    dismiss.addEventListener("click", () => {
      hideInvite();
      ui.launcher.focus();
    });
    box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        hideInvite();
        ui.launcher.focus();
      }
    });
    box.append(message, dismiss);
    ui.root.insertBefore(box, ui.panel);
    ui.invite = box;
    if (Number.isFinite(rule)) send({ type: "invite_shown", rule: rule });
  }

  function hideInvite() {
    clearInviteWait();
    if (ui.invite) {
      ui.invite.remove();
      ui.invite = null;
    }
  }

  /* ---------- start ---------- */

  function start() {
    lang = chooseLanguage();
    T = TEXTS[lang];
    build();
    window.addEventListener("online", reconnectNow);
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && (state.open || state.lastSeen)) reconnectNow();
    });
    // Reopen the panel after the visitor moved to another page of the shop mid-conversation;
    // a returning visitor connects quietly so an operator's reply can light the badge.
    // Every page connects (it reports where the visitor is); the chat's hello waits for the panel
    // or for a visitor who talked here before.
    if (session.get("open") === "1") open();
    else connect();
    window.addEventListener("popstate", checkNavigation);
    window.addEventListener("hashchange", checkNavigation);
    setInterval(checkNavigation, NAV_CHECK_MS);
  }

  // Guarded: a page may call these before the DOM (and so the widget) exists.
  window.SpravkaWidget = {
    open: () => ui.root && open(),
    close: () => ui.root && close(),
  };
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
