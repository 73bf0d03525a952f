"""Inbox fixtures: operators with real sessions, and an operator socket on the project's ASGI
application (session cookie, this server's own Origin)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from tests.chat.conftest import connect, in_db, knowledge, shop
from tests.fakes import fake_push  # noqa: F401  (tests/inbox/test_push.py)

__all__ = ["connect", "knowledge", "shop"]  # the widget's fixtures, for the visitor beside the operator

HOST = "testserver"
OWN_ORIGIN = f"http://{HOST}"


def _member(django_user_model, bot, email, role, **extra):
    from bots.models import Membership

    user = django_user_model.objects.create_user(username=email, email=email, password="pw-member-123", **extra)
    Membership.objects.create(bot=bot, user=user, role=role)
    return user


@pytest.fixture
def operator(django_user_model, shop):
    """An operator of the shop (not admin staff), named Анна."""
    return _member(django_user_model, shop, "anna@shop.example", "operator", first_name="Анна")


@pytest.fixture
def second_operator(django_user_model, shop):
    """Another operator of the shop, named Борис."""
    return _member(django_user_model, shop, "boris@shop.example", "operator", first_name="Борис")


@pytest.fixture
def other_operator(django_user_model, other_bot):
    """An operator of another tenant's bot."""
    return _member(django_user_model, other_bot, "olga@other.example", "operator", first_name="Ольга")


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


class Operator:
    """One operator's socket: send frames, read frames, wait for a frame of a type."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.ws = communicator

    async def send(self, **frame: Any) -> None:
        await self.ws.send_to(text_data=json.dumps(frame, ensure_ascii=False))

    async def recv(self, timeout: float = 10) -> dict[str, Any]:
        return dict(await self.ws.receive_json_from(timeout=timeout))

    async def until(self, kind: str, timeout: float = 10, **match: Any) -> dict[str, Any]:
        """The next frame of `kind` (whose top-level fields equal `match`), skipping others."""
        while True:
            frame = await self.recv(timeout)
            if frame["type"] == kind and all(frame.get(k) == v for k, v in match.items()):
                return frame

    async def conversation(self, state: str, timeout: float = 10) -> dict[str, Any]:
        """The next `conversation` frame showing a conversation in `state`."""
        while True:
            frame = await self.until("conversation", timeout)
            if frame["conversation"]["state"] == state:
                return dict(frame["conversation"])

    async def hello(self) -> list[dict[str, Any]]:
        """The queue, and the operator's presence that follows it (kept in `away`)."""
        await self.send(type="hello")
        queue = await self.until("queue")
        self.away = bool((await self.until("presence"))["away"])
        return list(queue["conversations"])

    async def nothing(self, timeout: float = 0.5) -> bool:
        return bool(await self.ws.receive_nothing(timeout=timeout))


ConnectOperator = Callable[..., Awaitable[Operator]]


@pytest.fixture
async def connect_operator() -> AsyncIterator[ConnectOperator]:
    from assistant.asgi import application

    opened: list[Operator] = []

    async def _connect(user=None, *, origin: str | None = OWN_ORIGIN, expect_open: bool = True,
                       accept_language: str = "", language_cookie: str = "") -> Operator:
        headers = [(b"host", HOST.encode())]
        if origin:
            headers.append((b"origin", origin.encode()))
        cookies = [f"sessionid={await in_db(session_cookie)(user)}"] if user is not None else []
        if language_cookie:  # what the language switch sets
            cookies.append(f"django_language={language_cookie}")
        if cookies:
            headers.append((b"cookie", "; ".join(cookies).encode()))
        if accept_language:
            headers.append((b"accept-language", accept_language.encode()))
        communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        client = Operator(communicator)
        opened.append(client)
        return client

    yield _connect
    for client in opened:
        try:
            await client.ws.disconnect()
        except Exception:  # noqa: S110 - already closed by the server
            pass
