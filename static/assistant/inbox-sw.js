/*
 * The inbox's service worker, served at /inbox/sw.js (inbox.views.service_worker) so its scope is
 * the inbox: shows a Web Push notice about a waiting visitor (inbox/push.py sends it: JSON with
 * title, body, url, conversation_id) and, on a click, brings an open inbox tab to that conversation
 * or opens one.
 *
 * What must stay true: a click only ever opens an address of this server's inbox (the url is
 * resolved against this worker's origin and must stay under its scope).
 */
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function inboxUrl(path) {
  const scope = self.registration.scope;
  try {
    const url = new URL(String(path || ""), scope);
    if (url.href.startsWith(scope)) return url.href;
  } catch (e) { /* a bad url: the inbox itself */ }
  return scope;
}

self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = {}; }
  const title = String(data.title || "Spravka");
  event.waitUntil(self.registration.showNotification(title, {
    body: String(data.body || ""),
    tag: "spravka-conversation-" + Number(data.conversation_id || 0),
    renotify: true,
    data: { url: inboxUrl(data.url) },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = inboxUrl(event.notification.data && event.notification.data.url);
  event.waitUntil((async () => {
    const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const same = tabs.find((tab) => tab.url === url) || tabs.find((tab) => tab.url.startsWith(self.registration.scope));
    if (same) {
      try {
        const focused = await same.focus();
        if (focused.url !== url) await focused.navigate(url);
        return;
      } catch (e) { /* a tab this worker does not control cannot be sent elsewhere: open one */ }
    }
    await self.clients.openWindow(url);
  })());
});
