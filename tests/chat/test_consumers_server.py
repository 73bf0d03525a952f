"""The widget socket under the server options production runs (`assistant.asgi.SERVER_OPTIONS`),
the places that spell those options out, and channel-layer events on a live socket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from assistant.asgi import SERVER_OPTIONS, uvicorn_flags
from tests.chat.conftest import ORIGIN
from tests.chat.test_consumers_uvicorn import _recv, running_uvicorn
from tests.conftest import REPO


@pytest.fixture
def production_server(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """`uvicorn assistant.asgi:application` with the production flags, on this test's database."""
    with running_uvicorn(tmp_path / "uvicorn.log", *uvicorn_flags()) as url:
        yield url


@pytest.mark.django_db(transaction=True)
async def test_production_server_declines_compression_and_bounds_frames(production_server, shop):
    url = f"{production_server}/ws/chat/{shop.public_key}/"
    async with connect(url, origin=ORIGIN) as ws:  # type: ignore[arg-type]  # offers permessage-deflate
        assert ws.response is not None and "Sec-WebSocket-Extensions" not in ws.response.headers
        await ws.send(json.dumps({"type": "hello", "visitor_id": "v_limits", "last_seen_id": None}))
        assert (await _recv(ws))["type"] == "welcome"

        text = "я" * settings.CHAT_MAX_FRAME_BYTES  # two bytes each in UTF-8
        over_limit = json.dumps({"type": "message", "client_msg_id": "big", "text": text}, ensure_ascii=False)
        await ws.send(over_limit)  # over CHAT_MAX_FRAME_BYTES, under the server's max: a readable error
        assert (await _recv(ws))["code"] == "too_large"
        await ws.send(json.dumps({"type": "ping"}))
        assert await _recv(ws) == {"type": "pong"}

        await ws.send("x" * (SERVER_OPTIONS["ws_max_size"] + 1))  # not the widget: closed by the server
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        assert ws.close_code == 1009


def test_deploy_docs_and_make_run_start_uvicorn_with_the_measured_options():
    from demo.run import DemoPorts, server_options

    deploy = (REPO / "docs" / "deploy.md").read_text()
    [command] = [line for line in deploy.splitlines() if line.startswith("uvicorn assistant.asgi:application")]
    words = command.split()
    flags = uvicorn_flags()
    for name, value in zip(flags[::2], flags[1::2], strict=True):
        assert name in words and words[words.index(name) + 1] == value, f"docs/deploy.md lacks {name} {value}"
    assert server_options(DemoPorts()).items() >= SERVER_OPTIONS.items()
    assert SERVER_OPTIONS["ws_per_message_deflate"] is False


@pytest.mark.django_db(transaction=True)
async def test_operator_events_arrive_in_order_between_the_visitors_own_frames(shop, connect):
    from channels.layers import get_channel_layer

    from chat.consumers import conversation_group

    client = await connect(shop)
    welcome = await client.hello()
    group = conversation_group(welcome["conversation_id"])
    layer = get_channel_layer()
    assert layer is not None
    for n in range(5):
        message = {"id": 1000 + n, "role": "operator", "text": f"Сообщение {n}", "links": [], "buttons": [],
                   "rating": 0, "created_at": "2026-01-01T00:00:00+00:00", "client_msg_id": ""}
        await layer.group_send(group, {"type": "chat.message", "message": message})
    await layer.group_send(group, {"type": "chat.state", "state": "operator"})
    await client.send(type="ping")
    frames = [await client.recv() for _ in range(7)]
    events = [f for f in frames if f["type"] != "pong"]
    assert [f["message"]["id"] for f in events[:5]] == [1000, 1001, 1002, 1003, 1004]
    assert events[5] == {"type": "state", "state": "operator"}
    assert {"type": "pong"} in frames


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
async def test_a_worker_thread_keeps_its_connection_and_drops_a_broken_one():
    """What every `_db` call runs in its worker thread, here on a thread of its own so that
    consecutive calls surely meet the same thread."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import DatabaseError, connections

    from chat import consumers
    from tests.chat.conftest import in_db

    one_thread = ThreadPoolExecutor(max_workers=1)
    loop = asyncio.get_running_loop()

    async def backend_pid() -> int:
        return await loop.run_in_executor(one_thread, consumers._keeping_connection(_backend_pid))

    try:
        first = await backend_pid()
        assert await backend_pid() == first  # no new connection per call

        await in_db(lambda: connections["default"].cursor().execute("SELECT pg_terminate_backend(%s)", [first]))()
        with pytest.raises(DatabaseError):  # the one call that meets the dead connection fails...
            await backend_pid()
        assert await backend_pid() != first  # ...and the next one has a new connection
    finally:
        await loop.run_in_executor(one_thread, connections.close_all)
        one_thread.shutdown()
