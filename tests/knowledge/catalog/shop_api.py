"""A real local order system for the tests and the benchmark: a threaded http.server that answers
like a shop's API, plus the ways such an API goes wrong (slow, down, HTML, garbage, redirects)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

ORDERS: dict[str, dict[str, Any]] = {
    "48213": {
        "status": "Передан в службу доставки",
        "delivery": {"date": "2026-12-05"},
        "tracking_url": "https://track.example/RU48213",
        "customer": {"phone": "+7 (999) 123-45-67", "email": "Ivan@Example.ru", "name": "Иван Петров"},
    },
    "48214": {
        "status": "Собирается на складе", "delivery": {"date": "к выходным"}, "tracking_url": "javascript:alert(1)",
    },
    "48215": {"status": {"code": 3}},  # a status that is not text
    "48216": {"state": "done"},  # no status where the pointer says
}


@dataclass
class ShopAPI:
    """The server's state: what it was asked (path, headers), and knobs a test turns."""

    host: str = "127.0.0.1"
    port: int = 0
    hits: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    connections: int = 0  # TCP connections accepted: a kept-alive one serves many requests
    delay: float = 0.0  # seconds before every answer (the benchmark's endpoint latency)
    fail_first: int = 0  # this many next requests get 503
    redirect_to: str = ""  # /redirect answers 302 to this address
    server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def template(self) -> str:
        return f"{self.origin}/api/orders/{{number}}"

    def start(self) -> ShopAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 keeps the connection open between requests, as a shop's API behind any web
            # server does (http.server's default, HTTP/1.0, closes it after every answer).
            protocol_version = "HTTP/1.1"
            # Headers and body in one write, as a real web server sends them: written separately on a
            # kept-alive connection, the body waits for the client's delayed ACK (Nagle), ~40 ms.
            wbufsize = 64 * 1024
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                api.connections += 1

            def do_GET(self) -> None:
                api.hits.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                if api.delay:
                    time.sleep(api.delay)
                if api.fail_first > 0:
                    api.fail_first -= 1
                    return self._send(503, b"busy", "text/plain")
                path = unquote(self.path.split("?", 1)[0])
                if path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", api.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                number = path.removeprefix("/api/orders/")
                if number == "slow":
                    time.sleep(2.0)
                    return self._json(200, ORDERS["48213"])
                if number == "html":
                    return self._send(200, b"<!doctype html><html><body>Maintenance</body></html>", "text/html")
                if number == "garbage":
                    return self._send(200, b"{\"status\": \"ok\"", "application/json")
                if number == "down":
                    return self._send(500, b"oops", "text/plain")
                if number == "huge":
                    return self._send(200, b"[" + b"1," * 300_000 + b"1]", "application/json")
                if number == "moved":  # a redirect within the same origin is followed
                    self.send_response(301)
                    self.send_header("Location", "/api/orders/48213")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if number in ORDERS:
                    return self._json(200, ORDERS[number])
                return self._json(404, {"error": "not found"})

            def _json(self, status: int, data: Any) -> None:
                self._send(status, json.dumps(data, ensure_ascii=False).encode(), "application/json; charset=utf-8")

            def _send(self, status: int, body: bytes, media: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that stopped reading (the too-large body) is the case under test

        server = Server((self.host, self.port), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self.server, self.port = server, server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def order_hits(self) -> list[str]:
        return [path for path, _headers in self.hits]
