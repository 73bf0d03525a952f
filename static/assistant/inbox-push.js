/*
 * «Уведомления на рабочий стол»: Web Push to this browser about visitors waiting for an operator,
 * even with the inbox closed (inbox/push.py sends them, /inbox/sw.js shows them).
 *
 * What must stay true:
 * - The state says what is true now: включены only when this browser has a subscription and the
 *   server stored it; браузер запретил when the permission is denied (only the browser's settings
 *   can lift it); a failure says why and changes nothing.
 * - Turning off unsubscribes in the browser and on the server: nothing reaches this browser after.
 * - Loaded only when the server has the VAPID keys (templates/inbox/base.html): no keys, no button.
 */
(function () {
  "use strict";

  const cfgNode = document.getElementById("push-config");
  const box = document.getElementById("push");
  const button = document.getElementById("push-toggle");
  const stateNode = document.getElementById("push-state");
  if (!cfgNode || !box || !button || !stateNode) return;
  const cfg = JSON.parse(cfgNode.textContent || "{}");
  const T = cfg.texts || {};
  let busy = false;

  function show(state, detail) {
    box.hidden = false;
    box.setAttribute("data-state", state);
    button.setAttribute("aria-pressed", state === "on" ? "true" : "false");
    stateNode.textContent = state === "failed" ? String(T.failed || "").replace("{reason}", detail || "") : (T[state] || "");
    stateNode.title = state === "denied" ? (T.denied_hint || "") : "";
  }

  function supported() {
    return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  }

  function keyBytes(base64url) {
    const padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(padded);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i += 1) out[i] = raw.charCodeAt(i);
    return out;
  }

  function sameKey(sub) {
    const had = sub.options && sub.options.applicationServerKey;
    if (!had) return true;
    const a = new Uint8Array(had), b = keyBytes(cfg.key);
    return a.length === b.length && a.every((v, i) => v === b[i]);
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": button.getAttribute("data-csrf") || "" },
      body: JSON.stringify(body),
    });
    let answer = {};
    try { answer = await response.json(); } catch (e) { answer = {}; }
    if (!response.ok) throw new Error(answer.error || String(response.status));
    return answer;
  }

  function registration() {
    return navigator.serviceWorker.register(cfg.worker, { scope: cfg.scope });
  }

  async function turnOn() {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      show(permission === "denied" ? "denied" : "off");
      return;
    }
    show("working");
    const reg = await registration();
    await navigator.serviceWorker.ready;
    let sub = await reg.pushManager.getSubscription();
    if (sub && !sameKey(sub)) { await sub.unsubscribe(); sub = null; } // the server's keys changed
    if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(cfg.key) });
    await post(cfg.subscribe, sub.toJSON());
    show("on");
  }

  async function turnOff() {
    show("working");
    const reg = await navigator.serviceWorker.getRegistration(cfg.scope);
    const sub = reg ? await reg.pushManager.getSubscription() : null;
    if (sub) {
      try { await post(cfg.unsubscribe, { endpoint: sub.endpoint }); } catch (e) { /* the server had none: fine */ }
      await sub.unsubscribe();
    }
    show("off");
  }

  button.addEventListener("click", async () => {
    if (busy) return;
    busy = true;
    try {
      if (box.getAttribute("data-state") === "on") await turnOff();
      else await turnOn();
    } catch (e) {
      show("failed", (e && e.message) || String(e));
    } finally {
      busy = false;
    }
  });

  async function start() {
    if (!supported()) {
      show("unsupported");
      button.disabled = true;
      return;
    }
    if (Notification.permission === "denied") { show("denied"); return; }
    show("off");
    if (Notification.permission !== "granted") return;
    try {
      // Already on in this browser: tell the server again (it may have dropped it), so the state is true.
      const reg = await navigator.serviceWorker.getRegistration(cfg.scope);
      const sub = reg ? await reg.pushManager.getSubscription() : null;
      if (sub) {
        await post(cfg.subscribe, sub.toJSON());
        show("on");
      }
    } catch (e) {
      show("failed", (e && e.message) || String(e));
    }
  }

  start();
})();
