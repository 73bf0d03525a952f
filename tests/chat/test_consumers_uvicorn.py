"""The widget protocol through a real uvicorn process and a real websocket client: what a browser
does, including a resend and a reconnect with resume."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connections
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.chat.conftest import DELIVERY_QUESTION, ORIGIN
from tests.conftest import REPO

pytestmark = pytest.mark.django_db(transaction=True)


def _database_url() -> str:
    """The test database (not the development one) in the DATABASE_URL form settings.py reads."""
    db = connections["default"].settings_dict
    auth = f"{quote(db['USER'])}:{quote(db['PASSWORD'])}@"
    if str(db["HOST"]).startswith("/"):
        return f"postgresql://{auth}/{db['NAME']}?host={quote(str(db['HOST']))}"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgresql://{auth}{db['HOST']}{port}/{db['NAME']}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"uvicorn exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"uvicorn did not listen on {port} within {timeout} s:\n{log.read_text()[-3000:]}")


class Uvicorn:
    """One `uvicorn assistant.asgi:application` subprocess with `flags`, on this test's database
    and Redis, its output appended to `log`. It can be killed (SIGKILL, as a crash or an OOM kill
    does) and started again on the same port, where clients reconnect as browsers do."""

    def __init__(self, log: Path, *flags: str, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.log, self.flags, self.env = log, flags, env or {}
        self.port = port or _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The websocket base, ws://127.0.0.1:<port>."""
        return f"ws://127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        """This server's own origin: what its pages send as `Origin`."""
        return f"http://127.0.0.1:{self.port}"

    def spawn(self) -> None:
        """Start the process; `wait_ready` waits until it listens."""
        server_env = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL} | self.env
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1",
                 "--port", str(self.port), "--log-level", "warning", *self.flags],
                cwd=REPO, env=server_env, stdout=out, stderr=subprocess.STDOUT,
            )

    def wait_ready(self) -> None:
        assert self.process is not None
        _wait_for_port(self.port, self.process, self.log)

    def start(self) -> Uvicorn:
        self.spawn()
        self.wait_ready()
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown, no closing frames, no goodbye to Redis or PostgreSQL."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(15)
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None


@contextmanager
def running_uvicorn(log: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`Uvicorn` started on a free port; yields its ws:// base and stops it on the way out."""
    server = Uvicorn(log, *flags, env=env)
    try:
        yield server.start().url
    finally:
        server.stop()


@pytest.fixture
def server(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """uvicorn with its defaults; stopped before the test database is flushed."""
    with running_uvicorn(tmp_path / "uvicorn.log", env={"CHAT_RATE_VISITOR": "100"}) as url:
        yield url


async def _recv(ws: ClientConnection) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 60)))


async def _ask(ws: ClientConnection, text: str, client_msg_id: str) -> list[dict[str, Any]]:
    await ws.send(json.dumps({"type": "message", "client_msg_id": client_msg_id, "text": text}))
    frames = [await _recv(ws)]
    while frames[-1] != {"type": "typing", "on": False}:
        frames.append(await _recv(ws))
    return frames


async def test_a_browser_like_client_asks_resends_and_resumes(server, knowledge, shop):
    url = f"{server}/ws/chat/{shop.public_key}/"
    async with connect(url, origin=ORIGIN) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "hello", "visitor_id": "v_uvicorn", "last_seen_id": None}))
        welcome = await _recv(ws)
        assert welcome["type"] == "welcome" and welcome["messages"] == []

        frames = await _ask(ws, DELIVERY_QUESTION, "c1")
        ack = frames[0]
        [reply] = [f["message"] for f in frames if f["type"] == "message"]
        assert ack["type"] == "ack" and ack["message"]["text"] == DELIVERY_QUESTION
        assert reply["links"] == [{"url": "https://shop.example/delivery", "title": "Доставка"}]

        again = await _ask(ws, DELIVERY_QUESTION, "c1")
        assert again[0] == ack
        assert [f["message"] for f in again if f["type"] == "message"] == [reply]

    async with connect(url, origin=ORIGIN) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "hello", "visitor_id": "v_uvicorn", "last_seen_id": ack["message"]["id"]}))
        resumed = await _recv(ws)
        assert welcome["conversation_id"] is None and resumed["conversation_id"] == ack["conversation_id"]
        assert resumed["messages"] == [reply]


async def test_a_real_server_refuses_a_foreign_origin_with_4403(server, shop):
    url = f"{server}/ws/chat/{shop.public_key}/"
    async with connect(url, origin="https://evil.example") as ws:  # type: ignore[arg-type]
        error = await _recv(ws)
        assert error["code"] == "origin_refused"
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        assert ws.close_code == 4403
