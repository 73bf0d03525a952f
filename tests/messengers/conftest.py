"""Messenger fixtures: the shop bot with its little knowledge (tests/chat/conftest.py), connected to
the fake Telegram Bot API (tests/fakes/telegram_api.py) through the real python-telegram-bot, or to
the fake VK API (tests/fakes/vk_api.py) through messengers/vk.py, or to the fake MAX Bot API
(tests/fakes/max_api.py) through messengers/max_bot.py, and a way to post updates to the real webhook
views as Telegram, VK's Callback API and MAX do."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from messengers import services
from messengers.models import Connection, Delivery, InboundUpdate, MessengerChat
from tests.chat.conftest import knowledge, shop  # noqa: F401
from tests.fakes import FAKE_MAX_TOKEN, FAKE_TELEGRAM_TOKEN, FAKE_VK_TOKEN, fake_max, fake_telegram, fake_vk  # noqa: F401
from tests.fakes.max_api import FakeMax
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.vk_api import FakeVK

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_SECRET_HEADER = "X-Max-Bot-Api-Secret"
CHAT = 5550001
WAIT = 30.0  # seconds: a loaded machine may take a while to embed the first question
VK_SECRET = "Sekret_VK_2026"  # the owner's Callback API secret in the tests
VK_CONFIRMATION = "1a2b3c4d"


SETTLE = 10.0  # seconds a test's end waits for the worker to finish what the test started


@pytest.fixture
def celery_worker_thread(celery_worker_thread: object) -> Iterator[object]:
    """The real worker (tests/conftest.py), stopped only once the updates and deliveries the test
    started are done: a turn still running when the test database is torn down fails in the
    worker's thread, long after its test, and under load can take the test process with it."""
    yield celery_worker_thread
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline and _busy():
        time.sleep(0.05)


def _busy() -> bool:
    return (InboundUpdate.objects.filter(status=InboundUpdate.Status.RECEIVED).exists()
            or MessengerChat.objects.filter(handling_since__isnull=False).exists()
            or Delivery.objects.filter(status__in=[Delivery.Status.PENDING, Delivery.Status.SENDING]).exists())


@pytest.fixture
def fast_retries(settings: Any) -> None:
    settings.MESSENGER_RETRY_BASE = 0.05
    settings.MESSENGER_TIMEOUT = 2.0
    settings.LLM_PROVIDER = "none"
    settings.SPRAVKA_PUBLIC_URL = "https://spravka.example"


@pytest.fixture
def connected(shop: Any, fake_telegram: FakeTelegram, fast_retries: None) -> Connection:  # noqa: F811
    """The shop connected to Telegram (getMe and setWebhook answered by the fake)."""
    return services.telegram_connect(bot=shop, token=FAKE_TELEGRAM_TOKEN)


Post = Callable[..., Any]


@pytest.fixture
def post_update(connected: Connection) -> Post:
    """POST an update to the connection's webhook with its secret (or `secret=` another)."""
    client = Client()

    def post(update: dict[str, Any] | bytes, *, secret: str | None = None, key: str | None = None) -> Any:
        body = update if isinstance(update, bytes) else json.dumps(update, ensure_ascii=False).encode()
        headers: dict[str, Any] = {} if secret == "" else {
            SECRET_HEADER: connected.secret if secret is None else secret}
        return client.post(f"/messengers/telegram/{key or connected.webhook_key}/", data=body,
                           content_type="application/json", headers=headers)

    return post


@pytest.fixture
def vk_connected(shop: Any, fake_vk: FakeVK, fast_retries: None) -> Connection:  # noqa: F811
    """The shop connected to a VK community (groups.getById answered by the fake)."""
    return services.vk_connect(bot=shop, token=FAKE_VK_TOKEN, confirmation=VK_CONFIRMATION, secret=VK_SECRET)


@pytest.fixture
def post_vk(vk_connected: Connection) -> Post:
    """POST an event (or raw bytes) to the connection's VK webhook, as the Callback API does."""
    client = Client()

    def post(event: dict[str, Any] | bytes, *, key: str | None = None) -> Any:
        body = event if isinstance(event, bytes) else json.dumps(event, ensure_ascii=False).encode()
        return client.post(f"/messengers/vk/{key or vk_connected.webhook_key}/", data=body,
                           content_type="application/json")

    return post


@pytest.fixture
def max_connected(shop: Any, fake_max: FakeMax, fast_retries: None) -> Connection:  # noqa: F811
    """The shop connected to a MAX bot (GET /me and POST /subscriptions answered by the fake)."""
    return services.max_connect(bot=shop, token=FAKE_MAX_TOKEN)


@pytest.fixture
def post_max(max_connected: Connection) -> Post:
    """POST an update (or raw bytes) to the connection's MAX webhook with its secret in the header
    (or `secret=` another, "" for none), as MAX does."""
    client = Client()

    def post(update: dict[str, Any] | bytes, *, secret: str | None = None, key: str | None = None) -> Any:
        body = update if isinstance(update, bytes) else json.dumps(update, ensure_ascii=False).encode()
        headers: dict[str, Any] = {} if secret == "" else {
            MAX_SECRET_HEADER: max_connected.secret if secret is None else secret}
        return client.post(f"/messengers/max/{key or max_connected.webhook_key}/", data=body,
                           content_type="application/json", headers=headers)

    return post


def wait_until(condition: Callable[[], object], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def wait_for_delivery(condition: Callable[[Delivery], bool], timeout: float = WAIT) -> Delivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for delivery in Delivery.objects.all():
            if condition(delivery):
                return delivery
        time.sleep(0.05)
    raise AssertionError(f"no delivery as expected: {list(Delivery.objects.values('status', 'attempts'))}")
