"""Web Push to the operators' browsers: subscriptions stored through the inbox's endpoints (checked
whole, Russian reasons), a waiting conversation pushed by a real Celery worker to a real local push
service (tests/fakes/push_service.py) that checks the VAPID signature, with the payload encrypted to
a real P-256 key pair the test decrypts; only the bot's own operators are told."""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import call_command
from django.test import Client

from assistant.env import EnvError, env_vapid
from bots.models import Membership
from chat import services
from inbox import push, tasks
from inbox.models import PushSubscription
from inbox.vapid import demo_keys, keys_generate

pytestmark = pytest.mark.django_db(transaction=True)

SUBSCRIBE = "/inbox/push/subscribe/"
UNSUBSCRIBE = "/inbox/push/unsubscribe/"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


@dataclass
class Browser:
    """What PushManager.subscribe() makes in a browser: a P-256 key pair and an auth secret; the
    push service's endpoint is given."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey
    secret: bytes

    @classmethod
    def new(cls, endpoint: str) -> Browser:
        return cls(endpoint, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))

    def subscription(self) -> dict:
        point = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "expirationTime": None,
                "keys": {"p256dh": b64url(point), "auth": b64url(self.secret)}}

    def read(self, body: bytes) -> dict:
        """Decrypt what the push service delivered, as the browser does (RFC 8291, aes128gcm)."""
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.secret, version="aes128gcm"))


@pytest.fixture
def push_on(settings, fake_push):
    """VAPID keys set, the fake push service allowed (http:// on 127.0.0.1), retries quick."""
    public, private = keys_generate()
    settings.SPRAVKA_VAPID_PUBLIC_KEY, settings.SPRAVKA_VAPID_PRIVATE_KEY = public, private
    settings.SPRAVKA_VAPID_SUBJECT = "mailto:ops@shop.example"
    settings.PUSH_HOSTS, settings.PUSH_ALLOW_HTTP = ["127.0.0.1"], True
    settings.PUSH_RETRY_BASE = 0.2
    fake_push.expect_key(public)
    return fake_push


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def subscribe(user, browser: Browser):
    return signed_in(user).post(SUBSCRIBE, browser.subscription(), content_type="application/json")


def member(django_user_model, bot, email, role):
    user = django_user_model.objects.create_user(username=email, email=email, password="pw-member-123")
    Membership.objects.create(bot=bot, user=user, role=role)
    return user


def waiting(bot, text="Не проходит оплата картой, что делать?", visitor_id="v_push"):
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id, page_url="https://shop.example/pay/")
    services.message_receive(conversation=conversation, text=text, client_msg_id="c1")
    services.conversation_handoff(conversation=conversation, reason="button")
    return conversation


def until(check, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


# ----- sending, through a real worker -----------------------------------------------------------------


def test_a_waiting_visitor_is_pushed_to_the_bots_operators_and_nobody_else(
    shop, owner, operator, other_bot, other_operator, push_on, celery_worker_thread,
):
    mine, owners, foreign = (Browser.new(push_on.endpoint()) for _ in range(3))
    assert subscribe(operator, mine).json() == {"ok": True}
    assert subscribe(owner, owners).status_code == 200  # an owner is told only when the bot has no operator
    assert subscribe(other_operator, foreign).status_code == 200

    conversation = waiting(shop)
    (request,) = push_on.wait_for(1, endpoint=mine.endpoint, ok=True)
    assert request.vapid_error == "" and request.claims["sub"] == "mailto:ops@shop.example"
    assert request.headers["content-encoding"] == "aes128gcm" and request.headers["ttl"] == "900"
    assert mine.read(request.body) == {
        "title": "Посетитель ждёт оператора — Демо-магазин", "body": "Не проходит оплата картой, что делать?",
        "url": f"/inbox/c/{conversation.pk}/", "conversation_id": conversation.pk,
    }
    until(lambda: PushSubscription.objects.get(endpoint=mine.endpoint).last_success_at is not None)
    assert push.waiting_recipients(conversation_id=conversation.pk) == [
        PushSubscription.objects.get(endpoint=mine.endpoint).pk]
    time.sleep(1)  # the fan-out queued every delivery at once: nothing else is on its way
    assert push_on.to(owners.endpoint) == [] and push_on.to(foreign.endpoint) == []


def test_a_gone_subscription_is_deleted_and_a_failing_one_retried_without_holding_the_others(
    shop, operator, django_user_model, push_on, celery_worker_thread,
):
    boris = member(django_user_model, shop, "boris@shop.example", "operator")
    vera = member(django_user_model, shop, "vera@shop.example", "operator")
    gone, flaky, fine = (Browser.new(push_on.endpoint()) for _ in range(3))
    for user, browser in ((operator, gone), (boris, flaky), (vera, fine)):
        assert subscribe(user, browser).status_code == 200
    push_on.answer_next(410, token=gone.endpoint.rsplit("/", 1)[-1])
    push_on.answer_next(500, 500, token=flaky.endpoint.rsplit("/", 1)[-1])

    long_question = "Здравствуйте! " + "очень " * 60 + "долгий вопрос"
    waiting(shop, text=long_question)
    push_on.wait_for(1, endpoint=fine.endpoint, ok=True)
    push_on.wait_for(1, endpoint=gone.endpoint)
    until(lambda: not PushSubscription.objects.filter(endpoint=gone.endpoint).exists())

    attempts = push_on.wait_for(3, endpoint=flaky.endpoint)
    assert [r.status for r in attempts] == [500, 500, 201]
    body = flaky.read(attempts[-1].body)["body"]
    assert body.startswith("Здравствуйте! очень") and body.endswith("…") and len(body) == push.BODY_CHARS
    until(lambda: PushSubscription.objects.get(endpoint=flaky.endpoint).last_success_at is not None)
    stored = PushSubscription.objects.get(endpoint=flaky.endpoint)
    assert stored.failures == 0 and stored.last_error == ""


def test_a_push_service_that_keeps_failing_is_tried_a_few_times_then_counted(shop, operator, push_on, settings):
    settings.PUSH_MAX_ATTEMPTS = 3
    browser = Browser.new(push_on.endpoint())
    subscribe(operator, browser)
    subscription = PushSubscription.objects.get()
    conversation = waiting(shop)
    push_on.answer_next(500, 429, 500, 400)
    outcomes = [push.push_send(subscription_id=subscription.pk, conversation_id=conversation.pk, attempt=n)
                for n in (1, 2, 3)]
    assert [o.kind for o in outcomes] == ["retry", "retry", "failed"]
    assert outcomes[0].wait == pytest.approx(0.2) and outcomes[1].wait == pytest.approx(0.4)
    subscription.refresh_from_db()
    assert subscription.failures == 3 and subscription.last_error == "HTTP 500"
    # A refusal that will not change (400) is not retried.
    assert push.push_send(subscription_id=subscription.pk, conversation_id=conversation.pk).kind == "failed"
    # Taken meanwhile: nothing more is sent.
    from chat import handoff

    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    assert push.push_send(subscription_id=subscription.pk, conversation_id=conversation.pk).kind == "skipped"
    assert len(push_on.requests) == 4


def test_an_owner_is_told_when_the_bot_has_no_operator(shop, owner, push_on):
    browser = Browser.new(push_on.endpoint())
    subscribe(owner, browser)
    conversation = waiting(shop)
    assert push.waiting_recipients(conversation_id=conversation.pk) == [PushSubscription.objects.get().pk]
    assert tasks.push_deliver(PushSubscription.objects.get().pk, conversation.pk) == "sent"
    (request,) = push_on.to(browser.endpoint)
    assert browser.read(request.body)["conversation_id"] == conversation.pk


def test_english_browsers_get_the_notice_in_english(shop, operator, push_on):
    browser = Browser.new(push_on.endpoint())
    client = signed_in(operator)
    client.cookies["django_language"] = "en"
    assert client.post(SUBSCRIBE, browser.subscription(), content_type="application/json").status_code == 200
    conversation = waiting(shop)
    assert tasks.push_deliver(PushSubscription.objects.get().pk, conversation.pk) == "sent"
    (request,) = push_on.to(browser.endpoint)
    assert browser.read(request.body)["title"] == "A visitor is waiting for an operator — Демо-магазин"


# ----- subscribing -----------------------------------------------------------------------------------


def test_the_same_browser_again_updates_and_another_account_takes_it_over(shop, operator, django_user_model, push_on):
    browser = Browser.new(push_on.endpoint())
    subscribe(operator, browser)
    subscribe(operator, browser)
    assert PushSubscription.objects.filter(user=operator).count() == 1
    boris = member(django_user_model, shop, "boris@shop.example", "operator")
    subscribe(boris, browser)
    assert list(PushSubscription.objects.values_list("user_id", flat=True)) == [boris.pk]


def _bad_inputs(fake_endpoint: str) -> list[tuple[object, int, str]]:
    good = Browser.new(fake_endpoint).subscription()
    keys = good["keys"]
    return [
        ({**good, "endpoint": "x" * 5000}, 413, "Слишком большой запрос"),
        ({**good, "endpoint": "https://fcm.googleapis.com/" + "a" * 1100}, 400, "длиннее 1024 символов"),
        ({**good, "endpoint": "ftp://127.0.0.1/push/a"}, 400, "должен начинаться с https://"),
        ({**good, "endpoint": "https://evil.example/push/a"}, 400, "службе уведомлений браузера"),
        ({**good, "endpoint": "https://user:pw@127.0.0.1/push/a"}, 400, "службе уведомлений браузера"),
        ({"keys": keys}, 400, "нет адреса службы уведомлений"),
        ({"endpoint": fake_endpoint}, 400, "нет ключей p256dh и auth"),
        ({**good, "keys": {"p256dh": keys["p256dh"]}}, 400, "нет ключей p256dh и auth"),
        ({**good, "keys": {**keys, "p256dh": "не ключ!"}}, 400, "p256dh повреждён"),
        ({**good, "keys": {**keys, "p256dh": b64url(b"\x04" + bytes(64))}}, 400, "p256dh повреждён"),
        ({**good, "keys": {**keys, "p256dh": keys["p256dh"] * 3}}, 400, "p256dh повреждён"),
        ({**good, "keys": {**keys, "auth": b64url(bytes(15))}}, 400, "auth повреждён"),
        ({**good, "keys": {**keys, "auth": 12345}}, 400, "нет ключей p256dh и auth"),
        ([good], 400, "объектом JSON"),
        ("{not json", 400, "в JSON"),
    ]


def test_a_bad_subscription_gets_a_clear_reason_and_stores_nothing(shop, operator, push_on):
    client = signed_in(operator)
    for body, status, reason in _bad_inputs(push_on.endpoint()):
        raw = body if isinstance(body, str) else json.dumps(body)
        response = client.post(SUBSCRIBE, raw, content_type="application/json")
        assert response.status_code == status, (body, response.content)
        assert reason in response.json()["error"], (reason, response.json())
    assert not PushSubscription.objects.exists()


def test_only_https_endpoints_unless_the_setting_allows_http(shop, operator, push_on, settings):
    settings.PUSH_ALLOW_HTTP = False
    response = subscribe(operator, Browser.new(push_on.endpoint()))
    assert response.status_code == 400 and "https://" in response.json()["error"]
    settings.PUSH_HOSTS = ["push.services.mozilla.com"]
    browser = Browser.new("https://updates.push.services.mozilla.com/wpush/v2/gAAAA")
    assert subscribe(operator, browser).status_code == 200


def test_not_signed_in_without_csrf_or_with_get_nothing_is_stored(shop, operator, push_on):
    browser = Browser.new(push_on.endpoint())
    response = Client().post(SUBSCRIBE, browser.subscription(), content_type="application/json")
    assert response.status_code == 403 and response.json()["error"] == "Войдите, чтобы включить уведомления."
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(operator)
    assert strict.post(SUBSCRIBE, browser.subscription(), content_type="application/json").status_code == 403
    assert signed_in(operator).get(SUBSCRIBE).status_code == 405
    assert not PushSubscription.objects.exists()


def test_unsubscribe_forgets_only_ones_own(shop, operator, other_operator, push_on):
    browser = Browser.new(push_on.endpoint())
    subscribe(operator, browser)
    response = signed_in(other_operator).post(UNSUBSCRIBE, {"endpoint": browser.endpoint},
                                              content_type="application/json")
    assert response.status_code == 404 and response.json()["error"] == "У вас нет такой подписки."
    assert PushSubscription.objects.filter(user=operator).exists()
    assert Client().post(UNSUBSCRIBE, {"endpoint": browser.endpoint},
                         content_type="application/json").status_code == 403
    response = signed_in(operator).post(UNSUBSCRIBE, {"endpoint": browser.endpoint}, content_type="application/json")
    assert response.json() == {"ok": True} and not PushSubscription.objects.exists()


# ----- no keys: push is off ----------------------------------------------------------------------------


def test_without_keys_push_is_off_and_nothing_fails(shop, operator, settings, fake_push):
    settings.SPRAVKA_VAPID_PUBLIC_KEY = settings.SPRAVKA_VAPID_PRIVATE_KEY = settings.SPRAVKA_VAPID_SUBJECT = ""
    settings.PUSH_HOSTS, settings.PUSH_ALLOW_HTTP = ["127.0.0.1"], True
    client = signed_in(operator)
    page = client.get("/inbox/").content.decode()
    assert "push-toggle" not in page and "push-config" not in page and "inbox-push.js" not in page
    response = subscribe(operator, Browser.new(fake_push.endpoint()))
    assert response.status_code == 400 and "выключены" in response.json()["error"]
    conversation = waiting(shop)  # the receiver queues nothing
    assert push.waiting_recipients(conversation_id=conversation.pk) == []
    assert not PushSubscription.objects.exists() and fake_push.requests == []


def test_with_keys_the_inbox_offers_the_button_and_serves_its_worker(shop, operator, push_on, settings):
    client = signed_in(operator)
    page = client.get("/inbox/").content.decode()
    assert 'id="push-toggle"' in page and "Уведомления на рабочий стол" in page
    assert settings.SPRAVKA_VAPID_PUBLIC_KEY in page and "inbox-push.js" in page
    worker = client.get("/inbox/sw.js")
    assert worker.status_code == 200 and worker["Content-Type"].startswith("application/javascript")
    assert worker["Service-Worker-Allowed"] == "/inbox/" and b"notificationclick" in worker.content
    assert Client().get("/inbox/sw.js").status_code == 200  # a script with nothing secret in it


# ----- keys ---------------------------------------------------------------------------------------------


def test_vapid_settings_are_all_or_nothing_and_checked(monkeypatch):
    for name in ("SPRAVKA_VAPID_PUBLIC_KEY", "SPRAVKA_VAPID_PRIVATE_KEY", "SPRAVKA_VAPID_SUBJECT"):
        monkeypatch.delenv(name, raising=False)
    assert env_vapid() == ("", "", "")
    public, private = keys_generate()
    monkeypatch.setenv("SPRAVKA_VAPID_PUBLIC_KEY", public)
    with pytest.raises(EnvError, match="missing SPRAVKA_VAPID_PRIVATE_KEY, SPRAVKA_VAPID_SUBJECT"):
        env_vapid()
    monkeypatch.setenv("SPRAVKA_VAPID_PRIVATE_KEY", private[:-4])
    monkeypatch.setenv("SPRAVKA_VAPID_SUBJECT", "mailto:ops@shop.example")
    with pytest.raises(EnvError, match="SPRAVKA_VAPID_PRIVATE_KEY must be a base64url P-256 key of 32 bytes"):
        env_vapid()
    monkeypatch.setenv("SPRAVKA_VAPID_PRIVATE_KEY", private)
    monkeypatch.setenv("SPRAVKA_VAPID_SUBJECT", "ops@shop.example")
    with pytest.raises(EnvError, match="must start with mailto: or https://"):
        env_vapid()
    monkeypatch.setenv("SPRAVKA_VAPID_SUBJECT", "mailto:ops@shop.example")
    assert env_vapid() == (public, private, "mailto:ops@shop.example")


def test_the_demo_makes_its_keys_once_and_the_command_prints_a_pair(tmp_path, capsys):
    first = demo_keys(tmp_path)
    assert demo_keys(tmp_path) == first and (tmp_path / "vapid.json").stat().st_mode & 0o777 == 0o600
    assert len(base64.urlsafe_b64decode(first["SPRAVKA_VAPID_PUBLIC_KEY"] + "=")) == 65
    call_command("vapid_keys", "--subject", "mailto:ops@shop.example")
    lines = dict(line.split("=", 1) for line in capsys.readouterr().out.split())
    assert lines["SPRAVKA_VAPID_SUBJECT"] == "mailto:ops@shop.example"
    assert len(base64.urlsafe_b64decode(lines["SPRAVKA_VAPID_PRIVATE_KEY"] + "=")) == 32


def test_a_conversation_given_in_turn_is_pushed_to_its_operator_alone(
    shop, operator, django_user_model, push_on, celery_worker_thread,
):
    """An operator still counts as on hand a few minutes after closing the inbox tab: a conversation
    given to them in turn reaches their browser, and the other operators' browsers hear nothing."""
    from bots.models import Bot
    from chat import presence

    other = member(django_user_model, shop, "boris@shop.example", "operator")
    Bot.objects.filter(pk=shop.pk).update(assignment=Bot.Assignment.IN_TURN)
    presence.presence_seen(operator)
    annas, boris = Browser.new(push_on.endpoint()), Browser.new(push_on.endpoint())
    assert subscribe(operator, annas).status_code == 200 and subscribe(other, boris).status_code == 200

    conversation = waiting(shop)
    (request,) = push_on.wait_for(1, endpoint=annas.endpoint, ok=True)
    assert annas.read(request.body) == {
        "title": "Вам передан разговор — Демо-магазин", "body": "Не проходит оплата картой, что делать?",
        "url": f"/inbox/c/{conversation.pk}/", "conversation_id": conversation.pk,
    }
    time.sleep(1)
    assert push_on.to(boris.endpoint) == []  # it did not wait: nobody else is told
    assert push.given_recipients(conversation_id=conversation.pk, operator_id=other.pk) == []
