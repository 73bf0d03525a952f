"""A local fake of the Anthropic Messages API and of an OpenAI-compatible `/chat/completions`.

A real HTTP server on 127.0.0.1 (a free port) that the real `anthropic` SDK and httpx talk to.
It plays a queue of scripted replies in order and records every request, so tests can assert what
was sent (headers, body) as well as how the client handled what came back. With an empty queue it
answers 500 with "no scripted reply", which makes a forgotten script fail loudly.

Replies: a tool call with given input, plain text (no tool call), broken JSON, HTTP errors (500,
529 overloaded, 429 with Retry-After, 400), a delay before the first byte (longer than the client
timeout = a timeout), and for streams a latency to the first token and a token rate (benchmarks).
Hangs that a per-read timeout never notices: `drip_after` sends the rest of the reply one byte at a
time (every read returns something, no event or body ever completes), `pings` keeps a stream busy
with ping events before any content. `aborted` counts replies the client hung up on before the
fake had sent them whole (a client that enforces its deadline).

A judge: requests forcing one tool can get their own queue (`script_tool("verdict", verdict(0.3,
"critique"), ...)`, played before the main queue), or that tool can be down (`tool_down("verdict")`:
every such request answers 529), while the step's own calls go on as scripted.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_TYPES = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


@dataclass
class Reply:
    status: int = 200
    tool_input: Any = None  # a dict -> a tool call; a str -> that raw text as the tool's JSON (broken)
    text: str | None = None  # plain text, no tool call
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    first_token_latency: float = 0.0  # streams: after message_start, before the first delta
    tokens_per_second: float = 0.0  # streams: 0 = as fast as possible
    chunk_chars: int = 4  # streams: characters per delta (about one token)
    input_tokens: int = 120
    output_tokens: int = 40
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    tool_name: str | None = None  # default: the tool the request forced
    cut_after: int | None = None  # streams: drop the connection after this many deltas
    # After this many events (streams: message_start, content_block_start, then one per delta) or
    # bytes of the body (plain replies): the rest one byte at a time, every `drip_interval` s, so
    # that no read ever waits long enough to time out.
    drip_after: int | None = None
    drip_interval: float = 0.2
    pings: int = 0  # streams: ping events after message_start, every `ping_interval` s, before the content
    ping_interval: float = 0.2


def tool_use(data: Any, **options: Any) -> Reply:
    return Reply(tool_input=data, **options)


def broken_json(raw: str, **options: Any) -> Reply:
    return Reply(tool_input=raw, **options)


def text(content: str, **options: Any) -> Reply:
    return Reply(text=content, **options)


def error(status: int, *, retry_after: float | None = None, **options: Any) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, headers=headers, **options)


def server_error() -> Reply:
    return error(500)


def overloaded() -> Reply:
    return error(529)


def rate_limited(retry_after: float = 0.05) -> Reply:
    return error(429, retry_after=retry_after)


def bad_request() -> Reply:
    return error(400)


def verdict(score: float, critique: str = "", **options: Any) -> Reply:
    """A judge's answer: a `verdict` tool call with `score` and `critique`."""
    return Reply(tool_input={"score": score, "critique": critique or "Замечаний нет."}, **options)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: str  # the body as received, for "this text was never sent" assertions
    at: float  # time.monotonic() when it arrived


class FakeLLMServer:
    def __init__(self) -> None:
        self._queue: deque[Reply] = deque()
        # Replies for requests that force one tool (a judge's `verdict`), played before the main
        # queue; a tool that is "down" answers every request with that status (a judge that is off).
        self._by_tool: dict[str, deque[Reply]] = {}
        self._down: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self.aborted = 0  # replies the client hung up on before they were sent whole
        self.dripped = 0  # bytes sent one at a time (`drip_after`), all replies together
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._http.block_on_close = False
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases handlers sleeping through a scripted delay
        self._http.shutdown()
        self._http.server_close()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def script_tool(self, tool: str, *replies: Reply) -> None:
        """Replies for requests forcing `tool` only (e.g. the judge), in order, apart from the main queue."""
        with self._lock:
            self._by_tool.setdefault(tool, deque()).extend(replies)

    def tool_down(self, tool: str, status: int = 529) -> None:
        """Every request forcing `tool` fails with `status` (529 overloaded: the judge is down)."""
        with self._lock:
            self._down[tool] = status

    def tool_up(self, tool: str) -> None:
        with self._lock:
            self._down.pop(tool, None)

    def requests_for(self, tool: str) -> list[RecordedRequest]:
        return [r for r in self.requests if ((r.body.get("tool_choice") or {}).get("name")) == tool]

    @property
    def pending(self) -> int:
        return len(self._queue) + sum(len(queue) for queue in self._by_tool.values())

    def wait_aborted(self, count: int = 1, timeout: float = 10.0) -> int:
        """`aborted` once it reaches `count` (the fake notices a client that hung up at its next
        write), or whatever it is after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self.aborted < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.aborted

    def _next(self, request: RecordedRequest) -> Reply | None:
        tool = str((request.body.get("tool_choice") or {}).get("name") or "")
        with self._lock:
            self.requests.append(request)
            if tool in self._down:
                return error(self._down[tool])
            if self._by_tool.get(tool):
                return self._by_tool[tool].popleft()
            return self._queue.popleft() if self._queue else None

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _new_id(self) -> int:
        return next(self._ids)


def _handler_for(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server

    return Handler


class DropConnection(Exception):
    """Scripted: the server vanishes mid-stream."""


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 for chunked streams, so a dropped connection is an error rather than an end of
    # stream; every response closes its connection, so no handler outlives a test's server.
    protocol_version = "HTTP/1.1"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
        body = json.loads(raw or "{}")
        headers = {key.lower(): value for key, value in self.headers.items()}
        reply = self.fake._next(RecordedRequest(self.path, headers, body, raw, time.monotonic()))
        self.close_connection = True
        try:
            self._answer(reply, body)
        except (BrokenPipeError, ConnectionResetError):
            with self.fake._lock:
                self.fake.aborted += 1  # the client gave up (its timeout)
        except DropConnection:
            pass  # the script drops the connection

    def _answer(self, reply: Reply | None, body: dict[str, Any]) -> None:
        openai = self.path.endswith("/chat/completions")
        if reply is None:
            reply = error(500)
            reply.text = "fake: no scripted reply"
        self.fake._sleep(reply.delay)
        if reply.status >= 400:
            self._send_json(reply.status, _error_body(reply, openai=openai), reply.headers)
        elif not self.path.endswith(("/v1/messages", "/chat/completions")):
            self._send_json(404, {"error": {"type": "not_found_error", "message": self.path}}, {})
        elif body.get("stream"):
            events = _openai_stream(self.fake, reply, body) if openai else _anthropic_stream(self.fake, reply, body)
            self._send_stream(events, reply)
        else:
            payload = _openai_message(reply, body) if openai else _anthropic_message(self.fake, reply, body)
            self._send_json(200, payload, reply.headers, drip_after=reply.drip_after, interval=reply.drip_interval)

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str], *, drip_after: int | None = None,
        interval: float = 0.0,
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if drip_after is None:
            self.wfile.write(data)
            return
        self.wfile.write(data[:drip_after])
        self._drip(data[drip_after:], interval)

    def _drip(self, data: bytes, interval: float, *, chunked: bool = False) -> None:
        for index in range(len(data)):
            self.wfile.write(b"1\r\n%s\r\n" % data[index:index + 1] if chunked else data[index:index + 1])
            self.wfile.flush()
            with self.fake._lock:
                self.fake.dripped += 1
            self.fake._sleep(interval)

    def _send_stream(self, events: Iterator[bytes], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        for number, chunk in enumerate(events):
            if reply.drip_after is not None and number >= reply.drip_after:
                self._drip(chunk, reply.drip_interval, chunked=True)
                continue
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


# --- Anthropic Messages API -------------------------------------------------------------------------


def _error_body(reply: Reply, *, openai: bool) -> dict[str, Any]:
    kind = ERROR_TYPES.get(reply.status, "api_error")
    message = reply.text or f"fake {kind}"
    if openai:
        return {"error": {"message": message, "type": kind, "code": reply.status}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def _tool_name(reply: Reply, body: dict[str, Any]) -> str:
    forced = (body.get("tool_choice") or {}).get("name") or "answer"
    return reply.tool_name or forced


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
        "cache_creation_input_tokens": reply.cache_write_tokens,
    }


def _anthropic_message(fake: FakeLLMServer, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    number = fake._new_id()
    if reply.text is not None:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
    else:
        content = [{"type": "tool_use", "id": f"toolu_fake_{number}", "name": _tool_name(reply, body),
                    "input": reply.tool_input}]
    return {
        "id": f"msg_fake_{number}", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": content, "stop_reason": "end_turn" if reply.text is not None else "tool_use",
        "stop_sequence": None, "usage": _usage(reply),
    }


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _chunks(fake: FakeLLMServer, reply: Reply, content: str) -> Iterator[str]:
    fake._sleep(reply.first_token_latency)
    for number, start in enumerate(range(0, len(content), max(1, reply.chunk_chars))):
        if reply.cut_after is not None and number >= reply.cut_after:
            raise DropConnection()
        if start and reply.tokens_per_second > 0:
            fake._sleep(1.0 / reply.tokens_per_second)
        yield content[start:start + reply.chunk_chars]


def _anthropic_stream(fake: FakeLLMServer, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
    number = fake._new_id()
    start = _anthropic_message(fake, reply, body) | {"content": [], "stop_reason": None}
    start["usage"] = _usage(reply) | {"output_tokens": 1}
    yield _sse("message_start", {"type": "message_start", "message": start})
    for _ping in range(reply.pings):
        fake._sleep(reply.ping_interval)
        yield _sse("ping", {"type": "ping"})
    if reply.text is not None:
        block: dict[str, Any] = {"type": "text", "text": ""}
        content, delta_type, key = reply.text, "text_delta", "text"
    else:
        block = {"type": "tool_use", "id": f"toolu_fake_{number}", "name": _tool_name(reply, body), "input": {}}
        raw = reply.tool_input
        content = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        delta_type, key = "input_json_delta", "partial_json"
    yield _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
    for piece in _chunks(fake, reply, content):
        delta = {"type": delta_type, key: piece}
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = "end_turn" if reply.text is not None else "tool_use"
    yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": reply.output_tokens}})
    yield _sse("message_stop", {"type": "message_stop"})


# --- OpenAI-compatible /chat/completions ---------------------------------------------------------------


def _openai_content(reply: Reply) -> str:
    if reply.text is not None:
        return reply.text
    raw = reply.tool_input
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


def _openai_usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens},
    }


def _openai_message(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": body.get("model"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": _openai_content(reply)}}],
        "usage": _openai_usage(reply),
    }


def _openai_stream(fake: FakeLLMServer, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], **extra: Any) -> bytes:
        data = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}], **extra}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(fake, reply, _openai_content(reply)):
        yield chunk({"content": piece})
    final: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": body.get("model"),
             "choices": [], "usage": _openai_usage(reply)}
    yield f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode()
