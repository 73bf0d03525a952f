"""Chat fixtures: a shop bot that allows https://shop.example, a little real knowledge (embedded, so
hybrid search really runs), the demo shop crawled whole, and a websocket client on the project's ASGI
application."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.management import call_command
from django.db import connections
from django.test import override_settings

from bots.models import Bot
from knowledge.models import Entry

ORIGIN = "https://shop.example"

KNOWLEDGE = [
    (
        "delivery", "Доставка",
        "Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ доставка бесплатная. "
        "В другие города отправляем транспортной компанией, срок 2–5 дней.",
        "https://shop.example/delivery",
    ),
    (
        "return", "Возврат товара",
        "Вернуть товар можно в течение 14 дней после покупки, если сохранены упаковка и чек. "
        "Деньги вернём на карту в течение 10 дней.",
        "https://shop.example/return",
    ),
    (
        "payment", "Оплата",
        "Оплатить заказ можно картой на сайте, через СБП или наличными курьеру при получении.",
        "https://shop.example/payment",
    ),
]
DELIVERY_QUESTION = "Сколько стоит доставка по Москве?"
UNKNOWN_QUESTION = "Есть ли у вас парковка для вертолёта на крыше офиса?"


@pytest.fixture(scope="module")
def demo_shop_id(django_db_setup: Any, django_db_blocker: Any) -> Iterator[int]:
    """The demo shop's bot with the whole demo site crawled and embedded, as `make demo` has it."""
    from demo.server import make_server
    from knowledge.search import RECOMMENDED_CONFIDENCE, RECOMMENDED_MATCH

    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    with django_db_blocker.unblock(), override_settings(CRAWL_ALLOW_PRIVATE=True, CRAWL_DELAY=0.0):
        bot = Bot.objects.create(name="ТехноДом", slug="excerpts-demo", site_url=site,
                                 match_threshold=RECOMMENDED_MATCH, confidence_threshold=RECOMMENDED_CONFIDENCE)
        call_command("crawl", bot.slug, "--url", site, stdout=io.StringIO())
    server.shutdown()
    server.server_close()
    yield bot.pk
    with django_db_blocker.unblock():
        Entry.history.filter(bot_id=bot.pk).delete()
        Bot.objects.filter(pk=bot.pk).delete()


@pytest.fixture
def demo_shop(demo_shop_id: int, settings: Any) -> Bot:
    settings.LLM_PROVIDER = "none"
    return Bot.objects.get(pk=demo_shop_id)


@pytest.fixture
def shop(bot):
    """The demo bot, embeddable on https://shop.example."""
    bot.allowed_origins = [ORIGIN]
    bot.save(update_fields=["allowed_origins"])
    return bot


@pytest.fixture
def knowledge(shop):
    """Three entries of the shop, stored and embedded the way a crawl stores them."""
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    entries: dict[str, Entry] = {}
    for key, title, text, url in KNOWLEDGE:
        entries[key], _ = entry_upsert(
            bot=shop, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url, kind=Entry.Kind.QA)
        )
    embed_pending(bot_id=shop.pk)
    return entries


class Client:
    """A widget on a WebsocketCommunicator: send frames, read frames (with a generous timeout:
    the first search in a process loads the embedding model)."""

    def __init__(self, communicator: WebsocketCommunicator, bot: Any = None) -> None:
        self.ws = communicator
        self.bot = bot

    async def send(self, **frame: Any) -> None:
        await self.ws.send_to(text_data=json.dumps(frame, ensure_ascii=False))

    async def recv(self, timeout: float = 20) -> dict[str, Any]:
        return dict(await self.ws.receive_json_from(timeout=timeout))

    async def hello(self, visitor_id: str = "v_test", last_seen_id: int | None = None, *,
                    started: bool = True) -> dict[str, Any]:
        """The widget's hello. `started`: the visitor has a conversation already (as after a first
        message), so the welcome names it; False: a visitor who has only opened the widget."""
        if started and self.bot is not None:
            from chat import services

            await in_db(services.conversation_open)(bot=self.bot, visitor_id=visitor_id)
        await self.send(type="hello", visitor_id=visitor_id, last_seen_id=last_seen_id)
        welcome = await self.recv()
        assert welcome["type"] == "welcome", welcome
        return welcome

    async def ask(self, text: str, client_msg_id: str) -> list[dict[str, Any]]:
        """Send a message and collect what it causes: an error; a lone ack (the bot is silent while
        an operator is asked for); or ack, typing on, messages, typing off and maybe a state frame."""
        await self.send(type="message", client_msg_id=client_msg_id, text=text)
        frames = [await self.recv()]
        if frames[0]["type"] != "ack" or await self.ws.receive_nothing(timeout=0.5):
            return frames
        while frames[-1] != {"type": "typing", "on": False}:
            frames.append(await self.recv())
        if not await self.ws.receive_nothing(timeout=0.2):
            frames.append(await self.recv())
        return frames

    async def close(self) -> None:
        await self.ws.disconnect()


Connect = Callable[..., Awaitable[Client]]


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """Open widget sockets; each is closed after the test."""
    from assistant.asgi import application

    opened: list[Client] = []

    async def _connect(
        bot: Any, *, origin: str | None = ORIGIN, key: str | None = None, client_ip: str | None = None
    ) -> Client:
        headers = [(b"origin", origin.encode())] if origin else []
        communicator = WebsocketCommunicator(application, f"/ws/chat/{key or bot.public_key}/", headers=headers)
        if client_ip:
            communicator.scope["client"] = (client_ip, 50000)
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        client = Client(communicator, bot)
        opened.append(client)
        return client

    yield _connect
    for client in opened:
        try:
            await client.close()
        except Exception:  # noqa: S110 - already closed by the server
            pass


def closing_connections(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func`, closing the calling thread's database connections when it returns."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    return run


def in_db(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """Run an ORM read/write from an async test (in a worker thread that closes its connection)."""
    return database_sync_to_async(closing_connections(func), thread_sensitive=False)
