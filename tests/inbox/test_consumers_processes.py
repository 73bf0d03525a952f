"""Operators and visitors through real uvicorn processes that share only PostgreSQL and Redis, as
a deployment with several ASGI processes does: an operator on one process and a visitor on
another talk both ways; and a process killed with SIGKILL while an operator holds a conversation
loses nothing and doubles nothing once both sides reconnect.

The clients are real websocket clients: the operator's socket carries a real session cookie (a
session row committed in the test database, which the server reads) and this server's own
`Origin`; the visitor's carries the bot's allowed origin, as a browser on the shop's site does.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from assistant.asgi import uvicorn_flags
from chat.models import Message
from tests.chat.conftest import ORIGIN, in_db
from tests.chat.test_consumers_uvicorn import Uvicorn
from tests.inbox.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 30.0


class Peer:
    """One websocket client. Keeps every Message it was shown (welcome, transcript, message and
    ack frames), by id, in the order it first saw them: what a widget or an inbox would display."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.shown: dict[int, dict[str, Any]] = {}

    async def send(self, **frame: Any) -> None:
        await self.ws.send(json.dumps(frame, ensure_ascii=False))

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        frame = dict(json.loads(await asyncio.wait_for(self.ws.recv(), timeout)))
        for message in frame.get("messages") or ([frame["message"]] if frame.get("message") else []):
            self.shown.setdefault(message["id"], message)
        return frame

    async def until(self, kind: str, timeout: float = TIMEOUT, **match: Any) -> dict[str, Any]:
        """The next frame of `kind` whose top-level fields equal `match`, skipping the others."""
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.recv(max(0.1, deadline - time.monotonic()))
            if frame["type"] == kind and all(frame.get(k) == v for k, v in match.items()):
                return frame

    async def message(self, role: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next `message` frame's Message said by `role`."""
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.until("message", max(0.1, deadline - time.monotonic()))
            if frame["message"]["role"] == role:
                return dict(frame["message"])

    async def conversation(self, state: str) -> dict[str, Any]:
        """The next `conversation` frame showing a conversation in `state`."""
        while True:
            frame = await self.until("conversation")
            if frame["conversation"]["state"] == state:
                return dict(frame["conversation"])

    async def quiet(self, seconds: float) -> list[dict[str, Any]]:
        """Whatever arrives within `seconds` (nothing, when the other side stays silent)."""
        frames: list[dict[str, Any]] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                frames.append(await self.recv(left))
            except TimeoutError:
                break
        return frames

    async def sees(self, ids: list[int]) -> None:
        """Read frames until every message of `ids` has been shown on this socket."""
        deadline = time.monotonic() + TIMEOUT
        while not set(ids) <= set(self.shown):
            await self.recv(max(0.1, deadline - time.monotonic()))

    async def close(self) -> None:
        try:
            await self.ws.close()
        except (ConnectionClosed, OSError):
            pass


async def operator_on(server: Uvicorn, cookie: str) -> Peer:
    """The inbox's socket as a signed-in operator's browser opens it from this server's own page."""
    ws = await connect(
        f"{server.url}/ws/inbox/", origin=server.origin,  # type: ignore[arg-type]
        additional_headers={"Cookie": f"sessionid={cookie}"}, close_timeout=2, open_timeout=TIMEOUT,
    )
    return Peer(ws)


async def visitor_on(server: Uvicorn, public_key: str) -> Peer:
    """The widget's socket as a browser on the shop's site opens it."""
    ws = await connect(f"{server.url}/ws/chat/{public_key}/", origin=ORIGIN,  # type: ignore[arg-type]
                       close_timeout=2, open_timeout=TIMEOUT)
    return Peer(ws)


@pytest.fixture
def operator_cookie(operator) -> str:
    """Анна's session: a committed row in the test database, so the server processes read it."""
    return session_cookie(operator)


def _no_tracebacks(*servers: Uvicorn) -> None:
    for server in servers:
        log = server.log.read_text(errors="replace")
        assert "Traceback" not in log, log[-3000:]


@pytest.fixture
def two_servers(transactional_db: None, tmp_path: Path) -> Iterator[tuple[Uvicorn, Uvicorn]]:
    """Two ASGI processes (production options) on the same database and Redis."""
    a = Uvicorn(tmp_path / "a.log", *uvicorn_flags())
    b = Uvicorn(tmp_path / "b.log", *uvicorn_flags())
    try:
        a.spawn()  # both start at once: two Django start-ups overlap
        b.spawn()
        a.wait_ready()
        b.wait_ready()
        yield a, b
    finally:
        a.stop()
        b.stop()


@pytest.fixture
def one_server(transactional_db: None, tmp_path: Path) -> Iterator[Uvicorn]:
    server = Uvicorn(tmp_path / "server.log", *uvicorn_flags())
    try:
        yield server.start()
    finally:
        server.stop()


async def _waiting_and_taken(op: Peer, visitor: Peer, visitor_id: str) -> int:
    """The visitor asks for an operator, the operator sees the request and takes it; both have
    seen everything that happened. Returns the conversation's id."""
    await op.send(type="hello")
    assert (await op.until("queue"))["conversations"] == []
    await visitor.send(type="hello", visitor_id=visitor_id, last_seen_id=None)
    assert (await visitor.until("welcome"))["conversation_id"] is None  # the button starts it
    await visitor.send(type="button", id="operator")
    await visitor.until("state", state="waiting_operator")

    waiting = await op.conversation("waiting_operator")
    conversation_id = int(waiting["id"])
    assert waiting["waiting_since"]
    await op.send(type="take", conversation_id=conversation_id)
    taken = await op.conversation("operator")
    assert taken["assigned_to"]["name"] == "Анна" and taken["waiting_since"] is None
    joined = await visitor.message("system")
    assert joined["text"] == "Оператор Анна на связи."
    await visitor.until("state", state="operator")
    return conversation_id


async def test_an_operator_on_one_process_and_a_visitor_on_another_talk_both_ways(two_servers, shop, operator_cookie):
    a, b = two_servers
    op = await operator_on(a, operator_cookie)
    visitor = await visitor_on(b, shop.public_key)
    try:
        conversation_id = await _waiting_and_taken(op, visitor, "v_two_processes")

        await op.send(type="typing", conversation_id=conversation_id, on=True)
        assert await visitor.until("typing") == {"type": "typing", "on": True, "by": "operator"}
        await op.send(type="message", conversation_id=conversation_id, client_msg_id="o1", text="Чем помочь?")
        ack = await op.until("ack", client_msg_id="o1")
        shown = await visitor.message("operator")
        assert shown == ack["message"] and shown["author"] == "Анна"
        await op.send(type="typing", conversation_id=conversation_id, on=False)
        assert await visitor.until("typing") == {"type": "typing", "on": False, "by": "operator"}

        await visitor.send(type="message", client_msg_id="v1", text="Когда привезут мой заказ?")
        visitor_ack = await visitor.until("ack", client_msg_id="v1")
        heard = await op.message("visitor")
        assert heard == visitor_ack["message"] and heard["text"] == "Когда привезут мой заказ?"
        assert await visitor.quiet(1.0) == []  # the bot stays silent: no typing, no answer

        await op.send(type="open", conversation_id=conversation_id)
        transcript = await op.until("transcript")
        stored = await in_db(lambda: list(Message.objects.filter(conversation_id=conversation_id).order_by("id")))()
        assert [m["id"] for m in transcript["messages"]] == [m.pk for m in stored]
        assert [m.role for m in stored] == ["system", "system", "operator", "visitor"]
        assert set(visitor.shown) == {m.pk for m in stored}  # the visitor saw every message, on the other process
    finally:
        await asyncio.gather(op.close(), visitor.close())
    _no_tracebacks(a, b)


async def _stored(conversation_id: int, client_msg_id: str) -> int:
    """Wait until the server has committed the message; its id."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        row = await in_db(
            lambda: Message.objects.filter(conversation_id=conversation_id, client_msg_id=client_msg_id)
            .values_list("id", flat=True).first()
        )()
        if row is not None:
            return int(row)
        await asyncio.sleep(0.05)
    pytest.fail(f"message {client_msg_id} was never stored")


async def test_after_a_kill_9_both_sides_reconnect_to_the_same_transcript_with_nothing_lost_or_doubled(
    one_server, shop, operator_cookie
):
    server = one_server
    op = await operator_on(server, operator_cookie)
    visitor = await visitor_on(server, shop.public_key)
    conversation_id = await _waiting_and_taken(op, visitor, "v_crash")
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="o1", text="Здравствуйте, это Анна.")
    await op.until("ack", client_msg_id="o1"), await visitor.message("operator")
    await visitor.send(type="message", client_msg_id="v1", text="Мне нужен счёт для юрлица.")
    await visitor.until("ack", client_msg_id="v1"), await op.message("visitor")

    # In flight when the process dies: two messages committed whose acks nobody read, and one
    # operator message sent a moment before the kill (stored or not, depending on the race).
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="o2", text="Сейчас выставлю.")
    o2_id = await _stored(conversation_id, "o2")
    await visitor.send(type="message", client_msg_id="v2", text="ИНН 7707083893")
    v2_id = await _stored(conversation_id, "v2")
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="o3", text="Счёт отправлен на почту.")
    server.kill()
    visitor_saw_before = dict(visitor.shown)
    await asyncio.gather(op.close(), visitor.close())

    server.start()  # the same address: the widget and the inbox reconnect where they were
    visitor = await visitor_on(server, shop.public_key)
    await visitor.send(type="hello", visitor_id="v_crash", last_seen_id=max(visitor_saw_before))
    welcome = await visitor.until("welcome")
    assert welcome["conversation_id"] == conversation_id and welcome["state"] == "operator"
    assert not {m["id"] for m in welcome["messages"]} & set(visitor_saw_before)  # nothing shown twice
    await visitor.send(type="message", client_msg_id="v2", text="ИНН 7707083893")  # the widget resends unacked
    assert (await visitor.until("ack", client_msg_id="v2"))["message"]["id"] == v2_id

    op = await operator_on(server, operator_cookie)
    await op.send(type="hello")
    [held] = (await op.until("queue"))["conversations"]
    assert held["id"] == conversation_id and held["state"] == "operator" and held["assigned_to"]["name"] == "Анна"
    await op.send(type="open", conversation_id=conversation_id)
    await op.until("transcript")
    for client_msg_id, text in (("o2", "Сейчас выставлю."), ("o3", "Счёт отправлен на почту.")):  # the inbox resends
        await op.send(type="message", conversation_id=conversation_id, client_msg_id=client_msg_id, text=text)
        ack = await op.until("ack", client_msg_id=client_msg_id)
        if client_msg_id == "o2":
            assert ack["message"]["id"] == o2_id  # the stored one, not a second copy

    stored = await in_db(lambda: list(Message.objects.filter(conversation_id=conversation_id).order_by("id")))()
    assert [(m.role, m.client_msg_id) for m in stored] == [
        ("system", ""), ("system", ""), ("operator", "o1"), ("visitor", "v1"),
        ("operator", "o2"), ("visitor", "v2"), ("operator", "o3"),
    ]
    ids = [m.pk for m in stored]
    await op.send(type="open", conversation_id=conversation_id)
    transcript = await op.until("transcript")
    assert [m["id"] for m in transcript["messages"]] == ids
    assert transcript["conversation"]["state"] == "operator"
    # o3 reaches the new widget socket whether it was stored before the kill (welcome) or on the resend (a frame).
    await visitor.sees([i for i in ids if i not in visitor_saw_before])
    assert sorted({**visitor_saw_before, **visitor.shown}) == ids
    assert {**visitor_saw_before, **visitor.shown} == {m["id"]: m for m in transcript["messages"]}  # the same texts
    await asyncio.gather(op.close(), visitor.close())
    _no_tracebacks(server)
