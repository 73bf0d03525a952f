"""What the fake CRMs (amocrm_api.py, bitrix24_api.py) share: a real HTTP server on 127.0.0.1 (a
free port) that records every request, failed ones too, and the switches a test flips from its own
thread:

- `down(status=500)` / `up()`: every request answers that status with an HTML page, until `up()`;
- `fail_next(status=500, times=1, path=None)`: the next `times` requests (to paths containing `path`)
  answer `status` (401 with the CRM's own error body);
- `delay(seconds)`: wait before every answer (longer than the client's timeout = a timeout).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.fakes.local_server import LocalServer


@dataclass
class Request:
    method: str  # GET, POST
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # the JSON body, decoded (None without one)
    at: float
    status: int = 200  # what it was answered with


@dataclass
class Answer:
    status: int
    body: Any = None
    text: str = ""  # a page that is not JSON (down())


@dataclass
class Fault:
    status: int
    path: str | None


class FakeCrm(LocalServer):
    """A subclass answers in `_answer(request)` (called under the lock)."""

    def __init__(self) -> None:
        self._faults: deque[Fault] = deque()
        self._down: int | None = None
        self._delay = 0.0
        self.requests: list[Request] = []
        super().__init__(_handler_for(self))

    # --- switches -------------------------------------------------------------------------------------

    def down(self, status: int = 500) -> None:
        with self._lock:
            self._down = status

    def up(self) -> None:
        with self._lock:
            self._down = None

    def fail_next(self, status: int = 500, times: int = 1, path: str | None = None) -> None:
        with self._lock:
            self._faults.extend(Fault(status, path) for _ in range(times))

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    # --- what arrived ---------------------------------------------------------------------------------

    def requests_to(self, part: str, *, ok: bool | None = None) -> list[Request]:
        with self._lock:
            return self._matching(part, ok)

    def wait_for(self, part: str, count: int = 1, timeout: float = 15.0, *, ok: bool | None = True) -> list[Request]:
        """The requests whose path contains `part` once there are `count` of them (answered 2xx when
        `ok`); AssertionError listing what did arrive after `timeout` seconds."""
        with self._arrived:
            if self._arrived.wait_for(lambda: len(self._matching(part, ok)) >= count, timeout):
                return self._matching(part, ok)
            arrived = [f"{r.method} {r.path} -> {r.status}" for r in self.requests]
        raise AssertionError(f"expected {count} request(s) to {part} within {timeout}s; arrived: {arrived or 'none'}")

    def _matching(self, part: str, ok: bool | None) -> list[Request]:
        return [r for r in self.requests if part in r.path
                and (ok is None or (200 <= r.status < 300) == ok)]

    # --- answering ------------------------------------------------------------------------------------

    def _handle(self, request: Request) -> Answer:
        with self._lock:
            answer = self._fault(request) or self._answer(request)
            request.status = answer.status
            self.requests.append(request)
            self._arrived.notify_all()
            delay = self._delay
        if delay > 0:
            self._stopping.wait(delay)
        return answer

    def _fault(self, request: Request) -> Answer | None:
        if self._down is not None:
            return Answer(self._down, text=f"<html><body><h1>{self._down}</h1>nginx</body></html>")
        for fault in list(self._faults):
            if fault.path is None or fault.path in request.path:
                self._faults.remove(fault)
                if fault.status == 401:
                    return self._unauthorized()
                return Answer(fault.status, text=f"<html><body><h1>{fault.status}</h1></body></html>")
        return None

    def _unauthorized(self) -> Answer:
        return Answer(401, {"title": "Unauthorized", "status": 401})

    def _answer(self, request: Request) -> Answer:
        raise NotImplementedError


def _handler_for(fake: FakeCrm) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeCrm

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET", b"")

    def do_POST(self) -> None:
        self._serve("POST", self.rfile.read(int(self.headers.get("content-length") or 0)))

    def _serve(self, method: str, raw: bytes) -> None:
        self.close_connection = True
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = Request(method, unquote(urlsplit(self.path).path), headers, body, time.monotonic())
        answer = self.server_fake._handle(request)
        try:
            self._send(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, answer: Answer) -> None:
        if answer.body is not None:
            data, kind = json.dumps(answer.body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8"
        else:
            data, kind = answer.text.encode("utf-8"), "text/html; charset=utf-8"
        self.send_response(answer.status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)


Route = Callable[[Any, Request], Answer]
