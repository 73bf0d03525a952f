/*
 * «Подсказки из знаний» beside the inbox composer: the passages the bot's own search finds for the
 * visitor's last question (`suggest` → `suggestions`, docs/operator-protocol.md), asked again
 * when the conversation is opened and whenever the visitor writes. «Вставить» puts a passage and
 * its link in the composer; the operator edits and sends it (nothing reaches the visitor without
 * them). With a model, «Черновик ответа» asks for a draft (`draft` → `draft`): the bot's own
 * chain on that question, offered only with its source once it passed the bot's fact checks; a
 * refused draft shows the server's reason instead.
 *
 * What must stay true:
 * - Passages go in through textContent, the textarea's value and checked http(s) hrefs only,
 *   never innerHTML.
 * - Only the answer for the open conversation and its latest question is drawn.
 */
(function () {
  "use strict";

  const panel = document.getElementById("copilot");
  const list = document.getElementById("copilot-list");
  const empty = document.getElementById("copilot-empty");
  const question = document.getElementById("copilot-question");
  const text = document.getElementById("reply-text");
  const CURRENT = Number(document.body.getAttribute("data-conversation-id")) || null;
  if (!panel || !list || !CURRENT) return;
  const T = JSON.parse((document.getElementById("inbox-texts") || {}).textContent || "{}");

  function fmt(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (_, key) => (values[key] == null ? "" : String(values[key])));
  }

  function el(tag, cls, value) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (value != null) node.textContent = String(value);
    return node;
  }

  function ask() {
    if (window.spravkaInbox) window.spravkaInbox.send({ type: "suggest", conversation_id: CURRENT });
  }

  function insert(p) {
    if (!text) return;
    const link = /^https?:\/\//i.test(p.url || "") ? "\n" + p.url : "";
    const piece = String(p.text || "") + link;
    text.value = text.value.trim() ? text.value.replace(/\s+$/, "") + "\n\n" + piece : piece;
    text.focus();
    text.setSelectionRange(text.value.length, text.value.length);
    text.dispatchEvent(new Event("input", { bubbles: true })); // the visitor sees «Оператор печатает…»
  }

  function render(f) {
    list.textContent = "";
    const passages = Array.isArray(f.passages) ? f.passages : [];
    if (question) {
      question.textContent = f.question ? fmt(T.copilot_question, { q: f.question }) : "";
      question.hidden = !f.question;
    }
    passages.forEach((p) => {
      if (!p || typeof p !== "object") return;
      const item = el("li", "copilot-passage");
      const title = String(p.title || p.url || "");
      item.append(el("b", null, title), el("p", null, p.text || ""));
      if (typeof p.url === "string" && /^https?:\/\//i.test(p.url)) {
        const a = el("a", null, p.url);
        a.href = p.url;
        a.target = "_blank";
        a.rel = "noopener";
        item.appendChild(a);
      }
      const button = el("button", null, T.copilot_insert);
      button.type = "button";
      button.setAttribute("aria-label", fmt(T.copilot_insert_label, { title: title }));
      button.addEventListener("click", () => insert(p));
      item.appendChild(button);
      list.appendChild(item);
    });
    if (empty) empty.hidden = !!passages.length;
  }

  const draftAsk = document.getElementById("copilot-draft-ask");
  const draftOut = document.getElementById("copilot-draft-out");

  function renderDraft(f) {
    if (!draftOut) return;
    draftOut.textContent = "";
    if (draftAsk) draftAsk.disabled = false;
    if (!f.ok) {
      draftOut.appendChild(el("p", "copilot-refused", f.reason || T.error));
      return;
    }
    const source = f.source && typeof f.source.url === "string" && /^https?:\/\//i.test(f.source.url) ? f.source : null;
    const item = el("li", "copilot-passage copilot-drafted");
    item.append(el("b", null, T.copilot_draft_label), el("p", null, f.text || ""));
    if (source) {
      const a = el("a", null, source.title || source.url);
      a.href = source.url;
      a.target = "_blank";
      a.rel = "noopener";
      item.appendChild(a);
    }
    const button = el("button", null, T.copilot_insert);
    button.type = "button";
    button.setAttribute("aria-label", fmt(T.copilot_insert_label, { title: T.copilot_draft_label }));
    button.addEventListener("click", () => insert({ text: f.text, url: source ? source.url : "" }));
    item.appendChild(button);
    const holder = el("ol", "copilot-list");
    holder.appendChild(item);
    draftOut.appendChild(holder);
    item.scrollIntoView({ block: "nearest" });
  }

  if (draftAsk && draftOut) {
    draftAsk.addEventListener("click", () => {
      if (!window.spravkaInbox || !window.spravkaInbox.send({ type: "draft", conversation_id: CURRENT })) return;
      draftAsk.disabled = true;
      draftOut.textContent = "";
      draftOut.appendChild(el("p", "copilot-empty", T.copilot_drafting));
    });
  }

  document.addEventListener("spravka:inbox-frame", (e) => {
    const f = e.detail || {};
    if (f.conversation_id !== CURRENT) return;
    if (f.type === "transcript") ask();
    else if (f.type === "message" && f.message && f.message.role === "visitor") ask();
    else if (f.type === "suggestions") render(f);
    else if (f.type === "draft") renderDraft(f);
    else if (f.type === "error" && draftAsk) draftAsk.disabled = false;
  });
})();
