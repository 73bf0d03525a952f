"""A small stand-in for the chat server that speaks docs/widget-protocol.md, for the widget tests
that need what a real server rarely does on cue: drop the socket mid-answer, lose an ack, rate
limit, refuse the origin. It also serves `static/assistant/widget.js`, like the app does, so the
widget finds the socket the same way as in production: from its own script address.

The live tests (test_widget_live.py) run the real consumer; this one keeps the widget honest about
the protocol's edges.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

WIDGET_JS = Path(__file__).resolve().parents[2] / "static" / "assistant" / "widget.js"
REFUSALS = {
    "origin_refused": "Чат не разрешён на этом сайте.",
    "unknown_bot": "Чат не настроен: ключ виджета не найден.",
}
NO_ANSWER = "К сожалению, точного ответа у меня нет. Пригласить оператора? Он во всём разберётся."


@dataclass
class FakeChat:
    """State and switches; the tests flip the switches from their own thread."""

    site_url: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)  # every client frame, in order
    connections: int = 0
    conversation_id: int = 1
    hold_acks: bool = False  # store messages but never acknowledge (an ack lost with the socket)
    rate_limit_next: int = 0  # the next N new messages get rate_limited (unnamed, like older servers)
    fail_next: int = 0  # the next N messages get server_error naming their client_msg_id
    refuse: str = ""  # "origin_refused" or "unknown_bot": refuse every socket
    invite: dict[str, Any] | None = None  # answered to every `page` frame when set (an `invite` frame)
    url: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _server: Server | None = None
    _sockets: set[ServerConnection] = field(default_factory=set)

    # ----- controls (test thread) -----

    def start(self) -> FakeChat:
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True, name="fake-chat").start()
        if not ready.wait(10):
            raise RuntimeError("fake chat server did not start")
        return self

    def stop(self) -> None:
        if self._loop and self._server:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)

    def drop_connections(self) -> None:
        """Close every socket the way a restarting server or a lost network would."""
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._drop(), self._loop).result(10)

    def push(self, role: str, text: str) -> None:
        """A message the server starts, such as an operator's reply, to every open socket."""
        assert self._loop is not None
        message = self._store(role, text)
        frame = {"type": "message", "message": message}
        asyncio.run_coroutine_threadsafe(self._broadcast(frame), self._loop).result(10)

    def sent(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == kind]

    # ----- server (its own thread and loop) -----

    def _run(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._start(ready))
        self._loop.run_forever()

    async def _start(self, ready: threading.Event) -> None:
        self._server = await serve(self._socket, "127.0.0.1", 0, process_request=self._http)
        port = next(iter(self._server.sockets)).getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        ready.set()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        # Handlers of sockets the browser left half-open would be reported as destroyed pending.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        asyncio.get_running_loop().call_soon(asyncio.get_running_loop().stop)

    async def _broadcast(self, frame: dict[str, Any]) -> None:
        for ws in list(self._sockets):
            await self._send(ws, frame)

    async def _drop(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=1012, reason="restart")

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.startswith("/ws/chat/"):
            return None  # go on with the websocket handshake
        if request.path == "/static/assistant/widget.js":
            body = WIDGET_JS.read_bytes()
            headers = Headers([("Content-Type", "text/javascript; charset=utf-8"), ("Content-Length", str(len(body)))])
            return Response(200, "OK", headers, body)
        return connection.respond(404, "not found\n")

    async def _socket(self, ws: ServerConnection) -> None:
        self.connections += 1
        self._sockets.add(ws)
        try:
            if self.refuse:
                await self._send(ws, {"type": "error", "code": self.refuse, "message": REFUSALS[self.refuse]})
                await ws.close(code=4403 if self.refuse == "origin_refused" else 4404)
                return
            async for raw in ws:
                frame = json.loads(raw)
                self.frames.append(frame)
                await self._handle(ws, frame)
        except Exception:  # noqa: S110 - a socket dropped on purpose ends here
            pass
        finally:
            self._sockets.discard(ws)

    async def _send(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        await ws.send(json.dumps(frame, ensure_ascii=False))

    async def _handle(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "hello":
            after = frame.get("last_seen_id")
            history = [m for m in self.messages if after is None or m["id"] > after][-50:]
            await self._send(ws, {"type": "welcome", "conversation_id": self.conversation_id,
                                  "state": "bot", "messages": history})
        elif kind == "message":
            await self._message(ws, frame)
        elif kind == "rate":
            await self._send(ws, {"type": "rated", "message_id": frame["message_id"], "rating": frame["rating"]})
        elif kind == "button":
            note = self._store("system", "Оператор подключится в ближайшее время.")
            await self._send(ws, {"type": "message", "message": note})
            await self._send(ws, {"type": "state", "state": "waiting_operator"})
        elif kind == "ping":
            await self._send(ws, {"type": "pong"})
        elif kind == "page" and self.invite is not None:
            await self._send(ws, {"type": "invite", **self.invite})

    async def _message(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        cid, text = frame["client_msg_id"], frame["text"]
        visitor = next((m for m in self.messages if m["client_msg_id"] == cid), None)
        if visitor is None and self.rate_limit_next > 0:
            self.rate_limit_next -= 1
            await self._send(ws, {"type": "error", "code": "rate_limited", "retry_after": 1,
                                  "message": "Слишком много сообщений, подождите 1 с"})
            return
        if len(text) > 2000:
            await self._send(ws, {"type": "error", "code": "too_long", "client_msg_id": cid,
                                  "message": "Сообщение слишком длинное: не больше 2000 символов."})
            return
        if self.fail_next > 0:
            self.fail_next -= 1
            await self._send(ws, {"type": "error", "code": "server_error", "client_msg_id": cid,
                                  "message": "Что-то сломалось на нашей стороне. Попробуйте ещё раз."})
            return
        if visitor is None:
            visitor = self._store("visitor", text, client_msg_id=cid)
        if self.hold_acks:
            return
        await self._send(ws, {"type": "ack", "client_msg_id": cid, "message": visitor})
        await self._send(ws, {"type": "typing", "on": True})
        await asyncio.sleep(0.2)
        await self._send(ws, {"type": "delta", "client_msg_id": cid, "text": "Думаю"})
        await self._send(ws, {"type": "message", "message": self._reply(text)})
        await self._send(ws, {"type": "typing", "on": False})

    def _reply(self, text: str) -> dict[str, Any]:
        lowered = text.lower()
        if "верн" in lowered:
            link = {"url": f"{self.site_url}/returns/", "title": "Возврат товара"}
            return self._store("bot", "Вернуть товар можно в течение 14 дней.", links=[link])
        if "ссылк" in lowered:  # a link the widget must not make clickable
            return self._store("bot", "Вот она.", links=[{"url": "javascript:window.__xss=1", "title": "Опасная"}])
        return self._store("bot", NO_ANSWER, buttons=[{"id": "operator", "label": "Позвать оператора"}])

    def _store(self, role: str, text: str, **extra: Any) -> dict[str, Any]:
        message = {
            "id": len(self.messages) + 100, "role": role, "text": text, "links": [], "buttons": [], "rating": 0,
            "created_at": datetime.now(UTC).isoformat(), "client_msg_id": "", **extra,
        }
        self.messages.append(message)
        return message
