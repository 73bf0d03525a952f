// The review queue page (review/admin.py): one dialog at a time, the next one preloaded, one
// request per decision. Every text from the server is put in with textContent, never as HTML.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const T = $("rq-texts").dataset;
  const state = JSON.parse($("review-state").textContent);
  let current = state.current, preloaded = state.next, total = state.total;
  let mode = null; // null | "fixed" | "added"
  let busy = false, lastDecided = null, previousId = null;

  function url(kind, id) {
    const base = state.urls[kind].replace("/0/", "/" + id + "/");
    const query = new URLSearchParams(state.filter).toString();
    return query ? base + "?" + query : base;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function bubble(kind, label, text) {
    const node = el("div", "rq-msg " + kind);
    node.append(el("small", "", label), document.createTextNode(text));
    return node;
  }

  function render() {
    closeEditor();
    showError("");
    $("rq-card").hidden = !current;
    $("rq-empty").hidden = !!current;
    if (!current) return;
    $("rq-position").textContent = (current.position || 1) + " " + T.of + " " + total;
    $("rq-bot").textContent = current.bot.name;
    const reasons = $("rq-reasons");
    reasons.replaceChildren(...current.reasons.map((r) => {
      const tag = el("span", "rq-reason", r.label);
      tag.dataset.code = r.code;
      return tag;
    }));
    const when = current.answered_at + (current.confidence_shown ? " · " + T.confidence + " " + current.confidence_shown : "")
      + (current.repeats_label ? " · " + current.repeats_label : "");
    $("rq-when").textContent = when;
    const dialog = $("rq-dialog");
    dialog.replaceChildren(
      ...current.before.map((text) => bubble("visitor", current.visitor || T.visitor, text)),
      bubble("bot", T.botLabel, current.answer),
      ...(current.after ? [bubble("after", T.after, current.after)] : []),
    );
    const list = $("rq-sources");
    if (!current.sources.length) {
      list.replaceChildren(el("li", "", T.none));
    } else {
      list.replaceChildren(...current.sources.map((s) => {
        const li = el("li");
        if (s.url) {
          const a = el("a", "", s.title);
          a.href = s.url; a.target = "_blank"; a.rel = "noopener";
          li.append(a);
        } else {
          li.append(document.createTextNode(s.title));
        }
        if (s.used) li.append(el("span", "rq-tag used", T.used));
        if (s.review_needed) li.append(el("span", "rq-tag", T.flagged));
        if (!s.active) li.append(el("span", "rq-tag", T.off));
        return li;
      }));
    }
    const decided = current.status === "decided";
    $("rq-buttons").hidden = decided;
    $("rq-decided").hidden = !decided;
    $("rq-decided").textContent = decided
      ? T.decided + " «" + current.decision_label + "»" + (current.decided_at ? " · " + current.decided_at : "")
        + (current.corrected_text ? " — " + current.corrected_text : "")
      : "";
    $("rq-reopen-bar").hidden = !decided;
  }

  // A decision of any day, reopened from the list of decided items: the item is pending again and
  // its correction (if any) is undone.
  function reopen() {
    if (current && current.status === "decided") undoDecision(current.id);
  }

  function showError(message) {
    $("rq-error").hidden = !message;
    $("rq-error").textContent = message || "";
  }

  let reachShown = false; // the owner has seen the reach of the question and wordings as typed

  function openEditor(kind) {
    if (!current || current.status === "decided") return;
    mode = kind;
    $("rq-editor").hidden = false;
    $("rq-editor-label").textContent = kind === "fixed" ? T.fixLabel : T.addLabel;
    $("rq-question").value = current.question || current.before.join(" ");
    $("rq-wordings").value = "";
    const text = $("rq-text");
    text.value = kind === "fixed" ? current.answer : "";
    resetReach();
    counter();
    text.focus();
  }

  function closeEditor() {
    mode = null;
    $("rq-editor").hidden = true;
  }

  function resetReach() {
    reachShown = false;
    $("rq-reach").hidden = true;
    $("rq-save").firstChild.textContent = T.check + " ";
  }

  function reachRow(row) {
    const li = el("li");
    li.append(el("strong", "", "«" + row.question + "»"), document.createTextNode(" · " + T.times + " " + row.times + " · "));
    if (row.answer_url) {
      const a = el("a", "", row.answer_title || row.answer_url);
      a.href = row.answer_url; a.target = "_blank"; a.rel = "noopener";
      li.append(document.createTextNode(T.was + " "), a);
    } else {
      li.append(document.createTextNode(T.noAnswer));
    }
    return li;
  }

  function nearRow(row) {
    const li = el("li");
    li.append(el("strong", "", "«" + row.question + "»"), document.createTextNode(" · " + T.times + " " + row.times + " · "));
    li.append(document.createTextNode(row.other_words.length
      ? T.nearWords + " " + row.other_words.map((w) => "«" + w + "»").join(", ")
      : T.nearMeaning));
    const add = el("button", "button rq-near-add", T.nearAdd);
    add.type = "button";
    add.addEventListener("click", () => addWording(row.question));
    li.append(document.createTextNode(" "), add);
    return li;
  }

  // The owner says a close question asks the same: it becomes one more wording, and the reach is
  // checked again with it.
  function addWording(question) {
    const box = $("rq-wordings");
    const lines = box.value.split("\n").map((line) => line.trim()).filter(Boolean);
    if (!lines.includes(question)) lines.push(question);
    box.value = lines.join("\n");
    resetReach();
    showReach();
  }

  async function showReach() {
    if (!current || busy) return;
    busy = true;
    showError("");
    $("rq-reach").hidden = false;
    $("rq-reach-title").textContent = T.checking;
    $("rq-reach-list").replaceChildren();
    $("rq-near").hidden = true;
    try {
      const data = await post(url("reach", current.id), { question: $("rq-question").value, wordings: $("rq-wordings").value, text: $("rq-text").value });
      if (!data.ok) { $("rq-reach").hidden = true; showError(data.error); return; }
      $("rq-reach-title").textContent = data.would_answer.length ? T.reachSome : T.reachNone;
      $("rq-reach-list").replaceChildren(...data.would_answer.map(reachRow));
      $("rq-near-list").replaceChildren(...data.not_taken.map(nearRow));
      $("rq-near").hidden = !data.not_taken.length;
      reachShown = true;
      $("rq-save").firstChild.textContent = T.confirm + " ";
    } catch (e) {
      showError(T.network);
    } finally {
      busy = false;
    }
  }

  function save() {
    if (!mode) return;
    if (!$("rq-text").value.trim()) { showError(T.empty); return; }
    if (reachShown) decide(mode); else showReach();
  }

  function counter() {
    $("rq-count").textContent = window.spravkaPlural(state.counts.chars, $("rq-text").value.length);
  }

  async function post(target, body) {
    const response = await fetch(target, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": $("rq-csrf").value },
      body: new URLSearchParams(body),
    });
    const data = await response.json().catch(() => ({ ok: false, error: T.network }));
    return data;
  }

  async function decide(decision) {
    if (!current || busy) return;
    const text = decision === "correct" ? "" : $("rq-text").value;
    if (decision !== "correct" && !text.trim()) { showError(T.empty); return; }
    busy = true;
    try {
      const body = { decision, text, after: preloaded ? preloaded.id : "" };
      if (decision !== "correct") { body.question = $("rq-question").value; body.wordings = $("rq-wordings").value; }
      const data = await post(url("decide", current.id), body);
      if (!data.ok) { showError(data.error); return; }
      lastDecided = data.decided;
      previousId = current.id;
      current = preloaded || data.item;
      if (current && data.item && current.id === data.item.id) current = data.item;
      preloaded = data.next;
      total = data.total;
      render();
      showUndo(T.saved + " «" + lastDecided.decision_label + "»");
    } catch (e) {
      showError(T.network);
    } finally {
      busy = false;
    }
  }

  function showUndo(text) {
    $("rq-undo").hidden = !text;
    $("rq-undo-text").textContent = text || "";
  }

  function undo() {
    if (lastDecided) undoDecision(lastDecided.id);
  }

  async function undoDecision(id) {
    if (busy) return;
    busy = true;
    try {
      const data = await post(url("undo", id), {});
      if (!data.ok) { showError(data.error); return; }
      lastDecided = null;
      current = data.item; preloaded = data.next; total = data.total;
      render();
      showUndo(T.undone);
    } catch (e) {
      showError(T.network);
    } finally {
      busy = false;
    }
  }

  let seq = 0; // navigation counter: a late answer for an item the owner already left is dropped

  async function load(id) {
    const mine = ++seq;
    const response = await fetch(url("card", id), { credentials: "same-origin" });
    const data = await response.json();
    if (mine !== seq) return;
    if (!data.ok) { showError(data.error); return; }
    current = data.item; preloaded = data.next; total = data.total; previousId = data.previous_id;
    render();
  }

  function next() {
    if (!current || busy || !preloaded) return;
    previousId = current.id;
    current = preloaded;
    render();
    // Refresh the shown item's place and preload the one after it.
    load(current.id).catch(() => showError(T.network));
  }

  function previous() {
    if (!current || busy) return;
    if (previousId) {
      load(previousId).catch(() => showError(T.network));
      return;
    }
    const mine = ++seq;
    fetch(url("card", current.id), { credentials: "same-origin" })
      .then((response) => response.json())
      .then((data) => { if (mine === seq && data.ok && data.previous_id) return load(data.previous_id); })
      .catch(() => showError(T.network));
  }

  document.querySelectorAll("#rq-buttons [data-decision]").forEach((button) => {
    button.addEventListener("click", () => {
      const decision = button.dataset.decision;
      if (decision === "correct") decide("correct"); else openEditor(decision);
    });
  });
  $("rq-editor").addEventListener("submit", (event) => { event.preventDefault(); save(); });
  $("rq-question").addEventListener("input", resetReach);
  $("rq-wordings").addEventListener("input", resetReach);
  $("rq-text").addEventListener("input", () => { if (reachShown) resetReach(); });
  $("rq-cancel").addEventListener("click", closeEditor);
  $("rq-text").addEventListener("input", counter);
  $("rq-undo-button").addEventListener("click", undo);
  $("rq-reopen").addEventListener("click", reopen);

  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLElement && event.target.closest("textarea, input, select");
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && mode) {
      event.preventDefault(); save(); return;
    }
    if (event.key === "Escape" && mode) { event.preventDefault(); closeEditor(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    const actions = { "1": () => decide("correct"), "2": () => openEditor("fixed"), "3": () => openEditor("added"),
                      "j": next, "о": next, "k": previous, "л": previous, "u": undo, "г": undo };
    const action = actions[event.key.toLowerCase()];
    if (action) { event.preventDefault(); action(); }
  });

  render();
})();
