"""«Уведомления на рабочий стол» in the operators' inbox, in Chromium on the real app (uvicorn with
VAPID keys, the test database): the button asks for the permission, registers the inbox's service
worker (/inbox/sw.js, scope /inbox/), subscribes and stores the subscription on the server, shows
its state, and turns it off again; a refused subscription and a denied permission are said in words.

Headless Chromium has no push service: its PushManager.subscribe() fails («Registration failed -
permission denied») even with notifications allowed. So the browser's subscribe() and
getSubscription() are replaced (an init script) by ones returning a subscription made in Python
with a real P-256 key; everything else — the permission, the service worker's registration, the
POST with the CSRF token, the server's checks and its stored row — is the real thing. The service
worker's side is real too: a push message handed to it through the DevTools protocol
(ServiceWorker.deliverPushMessage) becomes the notification it shows. Delivery from the server is
tested against a local push service in tests/inbox/test_push.py."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from inbox.models import PushSubscription
from inbox.vapid import keys_generate
from tests.e2e.conftest import DESKTOP, committed, serving_app

pytestmark = pytest.mark.django_db

ENDPOINT = "http://127.0.0.1:9/push/e2e-browser"  # a push service the app accepts (PUSH_HOSTS); never called here
STUB = """
(() => {
  if (!window.PushManager) return;
  const json = %s;
  const make = () => ({
    endpoint: json.endpoint, options: { applicationServerKey: null }, toJSON: () => json,
    unsubscribe: async () => { localStorage.removeItem("e2e-push"); return true; },
  });
  PushManager.prototype.subscribe = async function (options) {
    if (%s) throw new DOMException("Registration failed - push service error", "AbortError");
    window.__keyLength = new Uint8Array(options.applicationServerKey).length;
    localStorage.setItem("e2e-push", "1");
    return make();
  };
  PushManager.prototype.getSubscription = async function () {
    return localStorage.getItem("e2e-push") ? make() : null;
  };
})();
"""
DENIED = """Object.defineProperty(Notification, "permission", { get: () => "denied" });"""


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def browser_subscription() -> dict:
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    point = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return {"endpoint": ENDPOINT, "expirationTime": None,
            "keys": {"p256dh": b64url(point), "auth": b64url(os.urandom(16))}}


@pytest.fixture(scope="module")
def desk(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """The app with Web Push on (the fake push service's host allowed) and an operator signed in."""
    from django.contrib.auth import get_user_model

    public, private = keys_generate()
    env = {"SPRAVKA_VAPID_PUBLIC_KEY": public, "SPRAVKA_VAPID_PRIVATE_KEY": private,
           "SPRAVKA_VAPID_SUBJECT": "mailto:ops@e2e.example", "PUSH_HOSTS": "127.0.0.1", "PUSH_ALLOW_HTTP": "1",
           "PGAPPNAME": "spravka-e2e-push"}
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-push")
        user = get_user_model().objects.create_user(username="anna@push.example", email="anna@push.example",
                                                    password="e2e-anna-1", first_name="Анна")
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
        client = Client()
        client.force_login(user)
        session = client.cookies["sessionid"].value
    with serving_app(django_db_blocker, **env) as app:
        yield {"app": app, "session": session, "user": user, "key": public}
    with django_db_blocker.unblock():
        PushSubscription.objects.filter(user=user).delete()
        bot.delete()
        user.delete()
        connections.close_all()


def inbox_tab(browser: Browser, desk: dict, *scripts: str, allow: bool = True) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    if allow:
        context.grant_permissions(["notifications"], origin=desk["app"])
    context.add_cookies([{"name": "sessionid", "value": desk["session"], "url": desk["app"]}])
    for script in scripts:
        context.add_init_script(script)
    return context, context.new_page()


def stored(user) -> list[str]:
    return committed(lambda: list(PushSubscription.objects.filter(user=user).values_list("endpoint", flat=True)))


@pytest.fixture
def tabs(browser: Browser) -> Iterator[list]:
    opened: list[tuple[BrowserContext, Page, list[str]]] = []
    yield opened
    for context, _page, errors in opened:
        context.close()
        assert errors == [], f"JavaScript errors in the inbox: {errors}"


def open_inbox(tabs: list, browser: Browser, desk: dict, *scripts: str, allow: bool = True) -> Page:
    context, page = inbox_tab(browser, desk, *scripts, allow=allow)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    tabs.append((context, page, errors))
    page.goto(f"{desk['app']}/inbox/")
    return page


NOTIFICATIONS = """async (tag) => (await (await navigator.serviceWorker.getRegistration("/inbox/"))
  .getNotifications({ tag })).map(n => ({ title: n.title, body: n.body, tag: n.tag, url: n.data.url }))"""


def deliver_push(page: Page, app: str, data: dict) -> list[dict]:
    """Hand `data` to the inbox's service worker as a push message (as the push service's message
    would come, through the browser's DevTools protocol); the notification it then shows."""
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    page.wait_for_function("() => navigator.serviceWorker.getRegistration('/inbox/').then(r => !!(r && r.active))")
    ours = lambda: [r for r in registrations if r["scopeURL"] == f"{app}/inbox/" and not r["isDeleted"]]  # noqa: E731
    deadline = time.monotonic() + 10
    while not ours() and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": app, "registrationId": ours()[0]["registrationId"], "data": json.dumps(data)})
    tag = f"spravka-conversation-{data['conversation_id']}"
    page.wait_for_function(f"async (tag) => ({NOTIFICATIONS})(tag).then(found => found.length > 0)", arg=tag)
    cdp.detach()
    return list(page.evaluate(NOTIFICATIONS, tag))


def test_the_button_subscribes_this_browser_shows_it_and_turns_it_off(browser: Browser, desk: dict, tabs: list):
    subscription = browser_subscription()
    page = open_inbox(tabs, browser, desk, STUB % (json.dumps(subscription), "false"))
    button, state = page.locator("#push-toggle"), page.locator("#push-state")
    expect(button).to_be_visible()
    expect(button).to_have_text("Уведомления на рабочий стол")
    expect(state).to_have_text("выключены")
    expect(button).to_have_attribute("aria-pressed", "false")

    button.focus()
    page.keyboard.press("Enter")  # a keyboard reaches it like a mouse
    expect(state).to_have_text("включены")
    expect(button).to_have_attribute("aria-pressed", "true")
    assert stored(desk["user"]) == [ENDPOINT]
    assert page.evaluate("() => window.__keyLength") == 65  # the server's VAPID key, decoded
    registration = page.evaluate("""async () => {
      const reg = await navigator.serviceWorker.getRegistration("/inbox/");
      return reg && { scope: reg.scope, script: (reg.active || reg.waiting || reg.installing).scriptURL };
    }""")
    assert registration == {"scope": f"{desk['app']}/inbox/", "script": f"{desk['app']}/inbox/sw.js"}

    # The service worker shows what a push service delivers (handed to it by the browser's own
    # DevTools protocol, as the push service's message would be).
    notice = {"title": "Посетитель ждёт оператора — ТехноДом", "body": "Где мой заказ?", "url": "/inbox/c/7/",
              "conversation_id": 7}
    assert deliver_push(page, desk["app"], notice) == [
        {"title": notice["title"], "body": "Где мой заказ?", "tag": "spravka-conversation-7",
         "url": f"{desk['app']}/inbox/c/7/"}]
    elsewhere = {**notice, "url": "https://evil.example/phish", "conversation_id": 8}
    (shown,) = deliver_push(page, desk["app"], elsewhere)
    assert shown["url"] == f"{desk['app']}/inbox/"  # a click never leaves this server's inbox

    page.reload()  # on again after a reload: the browser's subscription, confirmed with the server
    expect(state).to_have_text("включены")
    button.click()
    expect(state).to_have_text("выключены")
    expect(button).to_have_attribute("aria-pressed", "false")
    assert stored(desk["user"]) == []


def test_a_refused_subscription_and_a_denied_permission_are_said_in_words(browser: Browser, desk: dict, tabs: list):
    page = open_inbox(tabs, browser, desk, STUB % (json.dumps(browser_subscription()), "true"))
    page.locator("#push-toggle").click()
    expect(page.locator("#push-state")).to_have_text("не удалось: Registration failed - push service error")
    expect(page.locator("#push-toggle")).to_have_attribute("aria-pressed", "false")

    bad = {**browser_subscription(), "endpoint": "https://evil.example/push/1"}
    page = open_inbox(tabs, browser, desk, STUB % (json.dumps(bad), "false"))
    page.locator("#push-toggle").click()
    expect(page.locator("#push-state")).to_contain_text("не удалось: Адрес подписки должен начинаться с https://")
    assert stored(desk["user"]) == []

    page = open_inbox(tabs, browser, desk, DENIED, allow=False)
    expect(page.locator("#push-state")).to_have_text("браузер запретил")
    assert "разрешите их там" in (page.locator("#push-state").get_attribute("title") or "")
