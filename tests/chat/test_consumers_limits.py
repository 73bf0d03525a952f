"""Limits on every write of the widget socket (issue 10's probe: 300 × hello with a new visitor id
and the operator button in 3 s made 300 waiting conversations), counted in Redis: in one process
through the ASGI application, and across two real uvicorn processes sharing one Redis."""

import asyncio
import json
from pathlib import Path

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from chat.models import Conversation
from tests.chat.conftest import ORIGIN, in_db
from tests.chat.test_consumers_uvicorn import running_uvicorn

pytestmark = pytest.mark.django_db(transaction=True)
ADDRESS = "203.0.113.9"


async def test_new_conversations_from_one_address_are_limited(shop, connect, settings):
    settings.CHAT_RATE_CONVERSATIONS_IP = 3
    client = await connect(shop, client_ip=ADDRESS)
    for n in range(3):  # a conversation starts with the visitor's first message
        await client.hello(f"v_new_{n}", started=False)
        assert (await client.ask("Здравствуйте!", f"c{n}"))[0]["type"] == "ack"
    await client.hello("v_new_3", started=False)  # opening the widget starts nothing, so it is not counted
    [error] = await client.ask("Здравствуйте!", "c3")
    assert error["code"] == "rate_limited" and error["retry_after"] >= 1 and "разговоров" in error["message"]
    await client.hello("v_new_0", started=False)  # a visitor coming back to an open conversation is not a new one
    assert (await client.ask("Ещё вопрос", "c4"))[0]["type"] == "ack"
    assert await in_db(Conversation.objects.count)() == 3


async def test_the_operator_button_is_limited_per_visitor(shop, connect, settings):
    settings.CHAT_RATE_HANDOFF_VISITOR = 2
    client = await connect(shop, client_ip=ADDRESS)
    await client.hello("v_button")
    await client.send(type="button", id="operator")
    assert (await client.recv())["message"]["role"] == "system"
    assert await client.recv() == {"type": "state", "state": "waiting_operator"}
    await client.send(type="button", id="operator")  # already waiting: nothing new, but it counts
    assert await client.ws.receive_nothing(timeout=0.5)
    await client.send(type="button", id="operator")
    error = await client.recv()
    assert error["code"] == "rate_limited" and "оператора" in error["message"]


async def test_ratings_are_limited_per_visitor(shop, connect, settings):
    settings.CHAT_RATE_RATINGS_VISITOR = 3
    client = await connect(shop, client_ip=ADDRESS)
    await client.hello("v_rates")
    [reply] = [f["message"] for f in await client.ask("Привет", "c1") if f["type"] == "message"]
    answers = []
    for rating in (1, 0, 1, 0):
        await client.send(type="rate", message_id=reply["id"], rating=rating)
        answers.append(await client.recv())
    assert [a["type"] for a in answers[:3]] == ["rated"] * 3
    assert answers[3]["code"] == "rate_limited"


async def test_open_sockets_per_address_are_capped_and_freed_on_close(shop, connect, settings):
    settings.CHAT_MAX_SOCKETS_IP = 2
    first, second = await connect(shop, client_ip=ADDRESS), await connect(shop, client_ip=ADDRESS)
    # A socket is counted right after its handshake; its first answer shows the count is done.
    await first.hello("v_first")
    await second.hello("v_second")
    third = await connect(shop, client_ip=ADDRESS)
    refusal = await third.recv()
    assert refusal["code"] == "too_many_sockets" and refusal["message"]
    assert (await third.ws.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4429}
    other = await connect(shop, client_ip="203.0.113.10")  # another address is not affected
    await other.hello("v_other")
    await first.close()
    fourth = await connect(shop, client_ip=ADDRESS)
    await fourth.hello("v_after")


async def _frame(ws):
    return json.loads(await asyncio.wait_for(ws.recv(), 30))


async def test_limits_hold_across_two_processes(shop, tmp_path: Path):
    """One Redis, two uvicorn processes: sockets and new conversations from one address are
    counted together, whichever process each socket lands on."""
    limits = {"CHAT_MAX_SOCKETS_IP": "3", "CHAT_RATE_CONVERSATIONS_IP": "2"}
    with running_uvicorn(tmp_path / "a.log", env=limits) as a, running_uvicorn(tmp_path / "b.log", env=limits) as b:
        urls = [f"{base}/ws/chat/{shop.public_key}/" for base in (a, b, a, b)]
        sockets = []
        for url in urls[:3]:  # one at a time, each counted (its pong shows it) before the next
            sockets.append(await ws_connect(url, origin=ORIGIN))  # type: ignore[arg-type]
            await sockets[-1].send(json.dumps({"type": "ping"}))
            assert (await _frame(sockets[-1])) == {"type": "pong"}
        sockets.append(await ws_connect(urls[3], origin=ORIGIN))  # type: ignore[arg-type]
        try:
            for ws, visitor in zip(sockets[:3], ("v_a1", "v_b1", "v_a2"), strict=True):
                await ws.send(json.dumps({"type": "hello", "visitor_id": visitor, "last_seen_id": None}))
                assert (await _frame(ws))["type"] == "welcome"
            for ws in sockets[:2]:  # the first message starts a conversation
                await ws.send(json.dumps({"type": "message", "client_msg_id": "c1", "text": "Здравствуйте!"}))
                assert (await _frame(ws))["type"] == "ack"
            await sockets[2].send(json.dumps({"type": "message", "client_msg_id": "c1", "text": "Здравствуйте!"}))
            limited = await _frame(sockets[2])
            assert limited["code"] == "rate_limited"  # the third new conversation, counted over both

            refused = await _frame(sockets[3])  # the fourth socket (on B) is over the cap of 3
            assert refused["code"] == "too_many_sockets"
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(sockets[3].recv(), 10)
            assert sockets[3].close_code == 4429
        finally:
            for ws in sockets:
                await ws.close()
    assert await in_db(Conversation.objects.count)() == 2
